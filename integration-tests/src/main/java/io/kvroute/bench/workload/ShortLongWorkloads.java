package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The two short/long mixes of LightLLM's prefill-queue scheduling measurement
 * (docs/benchmarks.md): {@code long-first-burst}
 * (48 long prompts of 16,384 tokens scheduled at 0-47 ms, then 48 short prompts of 128 tokens at
 * 60-107 ms) and {@code interleaved} (192 requests at 500 req/s, one long to three short). Output
 * 128 tokens each. Classes {@code long} and {@code short}. Pure and seeded.
 */
public final class ShortLongWorkloads {

    private static final long MILLIS = 1_000_000L;

    private ShortLongWorkloads() {}

    /**
     * Sizes of a short/long mix.
     *
     * @param longTokens prompt length of a long request
     * @param shortTokens prompt length of a short request
     * @param outputTokens {@code max_tokens} of every request
     */
    public record Sizes(int longCount, int shortCount, int longTokens, int shortTokens, int outputTokens) {

        /** The figures of LightLLM's prefill-queue strategy study (its long-first burst), reproduced here. */
        public static Sizes burstFull() {
            return new Sizes(48, 48, 16_384, 128, 128);
        }

        /** --quick: a quarter-length long prompt and half the requests. */
        public static Sizes burstQuick() {
            return new Sizes(24, 24, 4_096, 128, 128);
        }

        public static Sizes interleavedFull() {
            return new Sizes(48, 144, 16_384, 128, 128);
        }

        public static Sizes interleavedQuick() {
            return new Sizes(16, 48, 4_096, 128, 128);
        }
    }

    /** Longs 1 ms apart from 0 ms, then shorts 1 ms apart from 60 ms (simulated time). */
    public static Workload longFirstBurst(Sizes sizes, RandomGenerator random, double charsPerToken) {
        List<ScheduledRequest> requests = new ArrayList<>();
        for (int i = 0; i < sizes.longCount(); i++) {
            requests.add(request(i * MILLIS, ids(random, sizes.longTokens()), sizes.outputTokens(), "long"));
        }
        long shortStartNanos = Math.max(60, sizes.longCount() + 12) * MILLIS;
        for (int i = 0; i < sizes.shortCount(); i++) {
            requests.add(request(shortStartNanos + i * MILLIS, ids(random, sizes.shortTokens()), sizes.outputTokens(), "short"));
        }
        String description = String.format("long-first burst: %d long prompts of %d tokens scheduled 1 ms apart from 0 ms, "
                + "then %d short prompts of %d tokens 1 ms apart from %d ms; output %d tokens each (simulated time).",
                sizes.longCount(), sizes.longTokens(), sizes.shortCount(), sizes.shortTokens(),
                shortStartNanos / MILLIS, sizes.outputTokens());
        return new Workload(requests, description);
    }

    /**
     * Requests 2 ms apart (500 req/s); every fourth (index 0, 4, 8, ...) is long. The counts in
     * {@code sizes} must be in a 1:3 ratio.
     */
    public static Workload interleaved(Sizes sizes, RandomGenerator random, double charsPerToken) {
        if (sizes.shortCount() != 3 * sizes.longCount()) {
            throw new IllegalArgumentException("interleaved needs shortCount = 3 x longCount: " + sizes);
        }
        int total = sizes.longCount() + sizes.shortCount();
        long intervalNanos = 2 * MILLIS;
        List<ScheduledRequest> requests = new ArrayList<>(total);
        for (int i = 0; i < total; i++) {
            boolean isLong = i % 4 == 0;
            requests.add(request(i * intervalNanos, ids(random, isLong ? sizes.longTokens() : sizes.shortTokens()),
                    sizes.outputTokens(), isLong ? "long" : "short"));
        }
        String description = String.format("interleaved: %d requests at 500 req/s (2 ms apart, %d ms in all), one long "
                + "(%d tokens) to three short (%d tokens); output %d tokens each (simulated time).",
                total, (total - 1) * 2, sizes.longTokens(), sizes.shortTokens(), sizes.outputTokens());
        return new Workload(requests, description);
    }

    /**
     * Prompts are token-id lists, as in that measurement: random ids in the Qwen3 vocabulary, so no two
     * prompts share a cached prefix and neither the router nor the engine spends CPU tokenizing.
     */
    private static int[] ids(RandomGenerator random, int tokens) {
        int[] ids = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            ids[i] = 1000 + random.nextInt(140_000);
        }
        return ids;
    }

    private static ScheduledRequest request(long atNanos, int[] inputIds, int outputTokens, String requestClass) {
        return new ScheduledRequest(atNanos, ChatRequests.PATH, ChatRequests.tokenPrompt(inputIds, outputTokens, requestClass),
                requestClass);
    }
}
