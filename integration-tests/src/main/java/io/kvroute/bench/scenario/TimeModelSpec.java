package io.kvroute.bench.scenario;

import java.util.List;
import java.util.Locale;

/**
 * The mock engine's time model as a scenario asks for it, rendered both as worker flags and as the
 * sentence every report states. Mirrors {@code io.kvroute.mock.engine.TimeModel}: step time =
 * overhead + prefill ms per 1k tokens x prefill tokens / 1000 + decode ms when the step decodes,
 * all divided by {@code speedup}. The flags are the mock worker's ({@code MockWorkerMain}).
 */
public record TimeModelSpec(double prefillMsPer1kTokens, double decodeMsPerStep, double stepOverheadMs, double speedup,
        int batchMaxTokens, int chunkedPrefillSize, String preset, String engineLoop) {

    public TimeModelSpec {
        if (!(speedup > 0)) {
            throw new IllegalArgumentException("speedup must be > 0: " + speedup);
        }
    }

    /** The h100-small preset's shape with the given numbers, in the {@code lightllm} engine loop. */
    public TimeModelSpec(double prefillMsPer1kTokens, double decodeMsPerStep, double stepOverheadMs, double speedup,
            int batchMaxTokens, int chunkedPrefillSize) {
        this(prefillMsPer1kTokens, decodeMsPerStep, stepOverheadMs, speedup, batchMaxTokens, chunkedPrefillSize,
                "h100-small", "lightllm");
    }

    /**
     * The mock worker's {@code sglang-long-context} preset (derived from the figures published with
     * SGLang's router-side ingress tokenization, see docs/benchmarks.md): 6.0 ms per 1k prefill tokens,
     * 9 ms per decode step, 1 ms per step, engine
     * tokenization 100 ms at 55k tokens and 580 ms at 125k on the worker's one tokenizer thread; the
     * {@code sglang} loop (that measurement ran on SGLang) with SGLang's default budgets
     * (max_prefill_tokens 16384, chunked_prefill_size 8192).
     */
    public static TimeModelSpec sglangLongContext(double speedup) {
        return new TimeModelSpec(6.0, 9.0, 1.0, speedup, 16384, 8192, "sglang-long-context", "sglang");
    }

    /** The same model in another engine loop. */
    public TimeModelSpec withEngineLoop(String loop) {
        return new TimeModelSpec(prefillMsPer1kTokens, decodeMsPerStep, stepOverheadMs, speedup, batchMaxTokens,
                chunkedPrefillSize, preset, loop);
    }

    /**
     * The mock worker's {@code h100-small} preset (H100 / Qwen3.5-0.8B, the setup of
     * LightLLM's prefill-queue scheduling measurement): 25 ms per 1k
     * prefill tokens, 9 ms per decode step, 1 ms per step, with batch_max_tokens = chunked_prefill_size = 1024.
     */
    public static TimeModelSpec h100Small(double speedup) {
        return new TimeModelSpec(25.0, 9.0, 1.0, speedup, 1024, 1024);
    }

    /** The same model with other batch limits (e.g. long-context prompts need larger steps). */
    public TimeModelSpec withBatch(int newBatchMaxTokens, int newChunkedPrefillSize) {
        return new TimeModelSpec(prefillMsPer1kTokens, decodeMsPerStep, stepOverheadMs, speedup, newBatchMaxTokens,
                newChunkedPrefillSize, preset, engineLoop);
    }

    public List<String> workerArgs() {
        return List.of(
                "--time-model", preset,
                "--engine-loop", engineLoop,
                "--prefill-ms-per-1k", num(prefillMsPer1kTokens),
                "--decode-ms-per-step", num(decodeMsPerStep),
                "--step-overhead-ms", num(stepOverheadMs),
                "--speedup", num(speedup),
                "--batch-max-tokens", Integer.toString(batchMaxTokens),
                "--chunked-prefill-size", Integer.toString(chunkedPrefillSize));
    }

    public String description() {
        return String.format(Locale.ROOT, "mock engine --engine-loop %s: steps of %s ms overhead + %s ms per 1k prefill "
                + "tokens + %s ms per decode step (simulated; the %s preset), batch_max_tokens = %d, chunked_prefill_size = "
                + "%d; every sleep divided by the speedup %s, so simulated time runs %sx faster than wall time.",
                engineLoop, num(stepOverheadMs), num(prefillMsPer1kTokens), num(decodeMsPerStep), preset, batchMaxTokens,
                chunkedPrefillSize, num(speedup), num(speedup));
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
