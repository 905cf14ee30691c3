package io.kvroute.bench.trace;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The trace scenarios' {@code --param} keys, with their defaults (full run, then {@code --quick}):
 * {@code trace} (the trace file; default the conversation trace in {@code shared/traces/} beside the
 * checkout), {@code requests} (a prefix of the trace; 0 = all), {@code speed} (arrival times divided
 * by it), {@code workers}, {@code kv-blocks} (each engine's KV pool in 512-token blocks) and
 * {@code max-output} (bounds {@code output_length}). Values are bounded before they size anything.
 */
record TraceParams(Path trace, int requests, double speed, int workers, int kvBlocks, int maxOutputTokens) {

    static final String DEFAULT_TRACE = "shared/traces/conversation_trace.jsonl.gz";

    /** Where the default trace is looked for: the checkout's parent, seen from the checkout or from a module. */
    static final List<String> TRACE_ROOTS = List.of("..", "../..");

    static final int MAX_WORKERS = 4096;
    static final int MAX_KV_BLOCKS = 1 << 20;

    /**
     * Per-engine KV pool of 768 blocks = 393,216 tokens: what one H100 80 GB keeps for KV next to
     * Llama-3.1-8B's 16 GB of bf16 weights (32 layers x 8 KV heads x 128 dims x 2 x 2 bytes = 128 KiB
     * per token, about 50 GB of KV at 0.9 memory utilisation); 3x the trace's longest prompt.
     */
    static final int DEFAULT_KV_BLOCKS = 768;

    static TraceParams of(Map<String, String> params, boolean quick, int defaultRequests, double defaultSpeed,
            int defaultWorkers, int defaultMaxOutput) {
        String tracePath = params.get("trace");
        Path trace = tracePath != null ? Path.of(tracePath) : defaultTrace();
        int requests = intParam(params, "requests", defaultRequests, 0, MooncakeTrace.MAX_REQUESTS);
        double speed = doubleParam(params, "speed", defaultSpeed);
        int workers = intParam(params, "workers", defaultWorkers, 1, MAX_WORKERS);
        int kvBlocks = intParam(params, "kv-blocks", DEFAULT_KV_BLOCKS, 1, MAX_KV_BLOCKS);
        int maxOutput = intParam(params, "max-output", defaultMaxOutput, 1, 1_000_000);
        return new TraceParams(trace, requests, speed, workers, kvBlocks, maxOutput);
    }

    long kvCapacityTokens() {
        return (long) kvBlocks * BlockTokens.BLOCK_TOKENS;
    }

    private static Path defaultTrace() {
        for (String root : TRACE_ROOTS) {
            Path p = Path.of(root).resolve(DEFAULT_TRACE);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return Path.of(TRACE_ROOTS.get(0)).resolve(DEFAULT_TRACE);
    }

    static int intParam(Map<String, String> params, String key, int fallback, int min, int max) {
        String v = params.get(key);
        if (v == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new IllegalArgumentException("--param " + key + " must be in [" + min + ", " + max + "]: " + v);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--param " + key + " must be an integer: " + v, e);
        }
    }

    private static double doubleParam(Map<String, String> params, String key, double fallback) {
        String v = params.get(key);
        if (v == null) {
            return fallback;
        }
        try {
            double d = Double.parseDouble(v.trim());
            if (!(d > 0 && d <= 1e6)) {
                throw new IllegalArgumentException("--param " + key + " must be in (0, 1e6]: " + v);
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--param " + key + " must be a number: " + v, e);
        }
    }

    String describe() {
        return String.format(Locale.ROOT, "%s, first %s requests, speed %sx, %d workers, KV %d blocks (%,d tokens) per worker, "
                + "output bounded at %d tokens", trace, requests == 0 ? "all" : Integer.toString(requests), speed, workers,
                kvBlocks, kvCapacityTokens(), maxOutputTokens);
    }
}
