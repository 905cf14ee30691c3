package io.kvroute.mock.http;

import java.util.concurrent.locks.LockSupport;

/**
 * The engine-side tokenization time a scenario simulates on the worker's tokenizer thread: the
 * thread is held until tokenizing {@code n} tokens has taken at least
 * {@code msAtReference x (n / referenceTokens)^exponent} (simulated ms, divided by the speedup).
 * The real tokenizer still runs; when it is slower than the model, nothing is added.
 *
 * <p>{@link #sglangLongContext()} fits the figures published with SGLang's router-side ingress tokenization
 * ({@code experimental/sgl-router/src/server/routes/chat.rs}): the engine's duplicate tokenization
 * cost 100 ms at 55k tokens and 580 ms at 125k; a power law through both points has
 * exponent ln(580/100) / ln(125/55) = 2.14 (90k: 287 ms). See docs/benchmarks.md for the arithmetic.
 */
public record TokenizeCost(double msAtReference, int referenceTokens, double exponent) {

    public TokenizeCost {
        if (msAtReference < 0 || referenceTokens < 1 || exponent < 0) {
            throw new IllegalArgumentException("bad tokenize cost: " + msAtReference + " ms at " + referenceTokens
                    + " tokens, exponent " + exponent);
        }
    }

    /** No simulated cost: only the real tokenizer's own time. */
    public static TokenizeCost none() {
        return new TokenizeCost(0, 1, 1);
    }

    /** SGLang's engine-side tokenization of long contexts as the sgl-router ingress-tokenization change reported it: 100 ms at 55,000 tokens, 580 ms at 125,000. */
    public static TokenizeCost sglangLongContext() {
        return new TokenizeCost(100, 55_000, Math.log(580.0 / 100.0) / Math.log(125_000.0 / 55_000.0));
    }

    /** Looks a cost up by name ({@code none}, {@code sglang-long-context}). */
    public static TokenizeCost forName(String name) {
        switch (name == null ? "" : name.trim()) {
            case "none":
                return none();
            case "sglang-long-context":
            case "seed003": // its former name, still accepted
                return sglangLongContext();
            default:
                throw new IllegalArgumentException("tokenize-cost: unknown value '" + name + "'; choose one of none, sglang-long-context");
        }
    }

    /** Simulated milliseconds to tokenize {@code tokens}. */
    public double millis(int tokens) {
        return msAtReference == 0 ? 0 : msAtReference * Math.pow((double) tokens / referenceTokens, exponent);
    }

    /** Holds the calling (tokenizer) thread for what the model adds to the real tokenization time. */
    static void holdTokenizer(TokenizeCost cost, int tokens, long elapsedNanos, double speedup) {
        long wait = cost.remainingNanos(tokens, elapsedNanos, speedup);
        if (wait > 0) {
            long deadline = System.nanoTime() + wait;
            long left;
            while ((left = deadline - System.nanoTime()) > 0 && !Thread.currentThread().isInterrupted()) {
                LockSupport.parkNanos(left);
            }
        }
    }

    /** Wall nanoseconds still to wait after the real tokenizer took {@code elapsedNanos}. */
    public long remainingNanos(int tokens, long elapsedNanos, double speedup) {
        long target = (long) (millis(tokens) * 1_000_000.0 / speedup);
        return Math.max(0, target - elapsedNanos);
    }
}
