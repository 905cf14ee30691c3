package io.kvroute.mock.engine;

/**
 * How long simulated work takes. Step time = stepOverheadMs + prefillMsPer1kTokens x prefill
 * tokens / 1000 + (decodeMsPerStep when the step decodes). All durations are divided by
 * {@code speedup} before the engine sleeps, so scenarios can run N x faster than real time;
 * reported metrics are in simulated (scaled) milliseconds only where a report says so.
 */
public record TimeModel(double prefillMsPer1kTokens, double decodeMsPerStep, double stepOverheadMs, double speedup) {

    public TimeModel {
        if (prefillMsPer1kTokens < 0 || decodeMsPerStep < 0 || stepOverheadMs < 0) {
            throw new IllegalArgumentException("time model durations must be >= 0");
        }
        if (!(speedup > 0)) {
            throw new IllegalArgumentException("speedup must be > 0: " + speedup);
        }
    }

    /** Small, fast defaults for demos and tests. */
    public static TimeModel fast() {
        return new TimeModel(20.0, 5.0, 0.5, 1.0);
    }

    /**
     * Calibrated to the setup LightLLM measured its prefill-queue strategies on
     * ({@code lightllm/server/router/model_infer/mode_backend/prefill_queue_strategy/}: H100 80GB,
     * Qwen3.5-0.8B, chunk 1024): 25 ms per 1k prefill tokens, 9 ms per decode step, 1 ms per step
     * overhead. 48 x 16384 prompt tokens in 1024-token steps then take
     * 786,432 x 25 / 1000 + 768 x 1 ms ~ 20.4 s, the long-request TTFT P95 LightLLM reported for that
     * burst (~20 s). See docs/scheduler.md.
     */
    public static TimeModel h100Small() {
        return new TimeModel(25.0, 9.0, 1.0, 1.0);
    }

    /**
     * A mid-size dense model on one A100 (8B class): 110 ms per 1k prefill tokens, 22 ms per decode
     * step, 2 ms overhead. Rough public-benchmark magnitudes, not a measurement of ours.
     */
    public static TimeModel a100Medium() {
        return new TimeModel(110.0, 22.0, 2.0, 1.0);
    }

    /**
     * The long-context engine of SGLang's router-side ingress tokenization (input ids forwarded from
     * {@code experimental/sgl-router/src/server/routes/chat.rs}), derived from the figures published
     * with it (docs/benchmarks.md, section long-context, has the arithmetic): removing 100 ms of
     * tokenization cut idle TTFT by 29 % at 55k tokens, so TTFT was
     * 100 / 0.29 = 345 ms and prefill 245 ms; 580 ms cut 41 % at 125k, so TTFT 1,415 ms and
     * prefill 835 ms; (245 + 835) ms / 180k tokens = 6.0 ms per 1k prefill tokens. Decode step and
     * overhead are h100-small's (those figures give none). Pair with {@code TokenizeCost.sglangLongContext()}.
     */
    public static TimeModel sglangLongContext() {
        return new TimeModel(6.0, 9.0, 1.0, 1.0);
    }

    /** Looks a preset up by name ({@code fast}, {@code h100-small}, {@code a100-medium}, {@code sglang-long-context}). */
    public static TimeModel preset(String name) {
        switch (name == null ? "" : name.trim()) {
            case "fast":
                return fast();
            case "h100-small":
                return h100Small();
            case "a100-medium":
                return a100Medium();
            case "sglang-long-context":
            case "seed003": // its former name, still accepted so existing command lines keep working
                return sglangLongContext();
            default:
                throw new IllegalArgumentException("time-model: unknown preset '" + name
                        + "'; choose one of fast, h100-small, a100-medium, sglang-long-context");
        }
    }

    /** The same model run {@code factor} x faster than real time. */
    public TimeModel withSpeedup(double factor) {
        return new TimeModel(prefillMsPer1kTokens, decodeMsPerStep, stepOverheadMs, factor);
    }

    /** Simulated duration of one step, in (unscaled) milliseconds. */
    public double stepMillis(long prefillTokens, boolean decodes) {
        return stepOverheadMs + prefillMsPer1kTokens * prefillTokens / 1000.0 + (decodes ? decodeMsPerStep : 0.0);
    }

    /** The prefill-compute share of a step: {@code prefillMsPer1kTokens x tokens / 1000}, unscaled ms. */
    public double prefillMillis(long prefillTokens) {
        return prefillMsPer1kTokens * prefillTokens / 1000.0;
    }

    /** Wall-clock nanoseconds to sleep for {@code simulatedMillis}. */
    public long wallNanos(double simulatedMillis) {
        return (long) (simulatedMillis * 1_000_000.0 / speedup);
    }
}
