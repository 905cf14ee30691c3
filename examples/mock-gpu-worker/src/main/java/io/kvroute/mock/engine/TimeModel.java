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

    /** Simulated duration of one step, in (unscaled) milliseconds. */
    public double stepMillis(long prefillTokens, boolean decodes) {
        return stepOverheadMs + prefillMsPer1kTokens * prefillTokens / 1000.0 + (decodes ? decodeMsPerStep : 0.0);
    }

    /** Wall-clock nanoseconds to sleep for {@code simulatedMillis}. */
    public long wallNanos(double simulatedMillis) {
        return (long) (simulatedMillis * 1_000_000.0 / speedup);
    }
}
