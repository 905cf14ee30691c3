package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The tenants of the {@code noisy-neighbor} benchmark (docs/tenants.md) as an open-loop schedule, in simulated
 * time. Offered load is stated as a share of the fleet capacity C, in prompt tokens per second counted
 * as if uncached (a cached request offers its whole prompt): eight chat tenants, each with a private
 * system prompt, at {@code chatShare} of C each; one interactive tenant asking for the interactive class;
 * one batch tenant offered more than the fleet can serve alone (so it is backlogged throughout); one
 * noisy tenant in the chat tenants' class (it asks for interactive and is clamped) sending unique long
 * prompts in bursts between {@code noiseStartMs} and {@code noiseEndMs}, then nothing until the end.
 *
 * <p>Every tenant draws from its own generator split from the seed in a fixed order, so the chat and
 * interactive tenants' arrivals and prompts are the same with and without the noisy and batch tenants
 * (the isolated arm). Each request carries its tenant's API key ({@code Authorization: Bearer}) and
 * class ({@code x-kvroute-priority}); its tag is the tenant, its request class the tenant's role. Pure.
 */
public final class NoisyNeighborWorkload {

    public static final String CHAT = "chat";
    public static final String INTERACTIVE = "interactive";
    public static final String BATCH = "batch";
    public static final String NOISY = "noisy";
    public static final String PRIORITY_HEADER = "x-kvroute-priority";

    private static final long NANOS_PER_MS = 1_000_000L;

    private NoisyNeighborWorkload() {}

    /**
     * @param capacityTokensPerSec the fleet capacity C: prefill tokens per simulated second
     * @param chatShare each chat tenant's offered share of C (the 8 %)
     * @param noisyShare the noisy tenant's average offered share of C during the noise (the 3x)
     * @param burstPeriodMs the noisy tenant sends one burst per period, its requests spread uniformly over
     *     the first {@code burstSpreadMs}
     */
    public record Params(double capacityTokensPerSec, long durationMs, long noiseStartMs, long noiseEndMs,
            int chatTenants, int chatPrefixTokens, int questionTokens, double chatShare,
            int interactivePrefixTokens, double interactiveShare,
            int batchPrefixTokens, int batchUniqueTokens, double batchShare,
            int noisyPromptTokens, double noisyShare, long burstPeriodMs, long burstSpreadMs,
            int outputTokens, int batchOutputTokens) {

        public Params {
            if (!(capacityTokensPerSec > 0) || durationMs <= 0 || noiseStartMs < 0 || noiseEndMs < noiseStartMs
                    || noiseEndMs > durationMs || burstPeriodMs <= 0 || burstSpreadMs <= 0 || burstSpreadMs > burstPeriodMs) {
                throw new IllegalArgumentException("inconsistent noisy-neighbor parameters: " + this);
            }
        }

        /** The shape: 240 s, noise from 60 s to 180 s at 3x C, 4k-token chat prefixes, 8k-token noise. */
        public static Params full() {
            return new Params(10_000, 240_000, 60_000, 180_000, 8, 4_096, 128, 0.08, 2_048, 0.04, 512, 3_584, 2.0,
                    8_192, 3.0, 5_000, 1_000, 32, 64);
        }

        /** --quick: 10 s (noise 2-7 s, bursts every second), quarter-size prompts, the same shares. */
        public static Params quick() {
            return new Params(10_000, 10_000, 2_000, 7_000, 8, 1_024, 64, 0.08, 512, 0.04, 256, 768, 2.0,
                    2_048, 3.0, 1_000, 300, 16, 16);
        }
    }

    /** The API key of {@code tenant} (the tenants file stores its SHA-256). */
    public static String apiKey(String tenant) {
        return "nn-key-" + tenant;
    }

    public static String chatTenant(int i) {
        return "chat-" + i;
    }

    /** Request headers of one tenant's requests. */
    public static Map<String, String> headers(String tenant, String priority) {
        return Map.of("Authorization", "Bearer " + apiKey(tenant), PRIORITY_HEADER, priority);
    }

    /**
     * The schedule of one seed; {@code contended} adds the noisy and batch tenants (false: the isolated arm).
     * Sorted by send time.
     */
    public static Workload generate(Params p, long seed, boolean contended, double charsPerToken) {
        SplittableRandom root = new SplittableRandom(seed);
        List<ScheduledRequest> out = new ArrayList<>();
        long durationNanos = p.durationMs() * NANOS_PER_MS;
        for (int t = 0; t < p.chatTenants(); t++) {
            SplittableRandom r = root.split();
            poisson(out, r, chatTenant(t), CHAT, "default", p.chatPrefixTokens(), p.questionTokens(),
                    p.chatShare() * p.capacityTokensPerSec(), 0, durationNanos, p.outputTokens(), charsPerToken);
        }
        SplittableRandom interactive = root.split();
        poisson(out, interactive, INTERACTIVE, INTERACTIVE, "interactive", p.interactivePrefixTokens(),
                p.questionTokens(), p.interactiveShare() * p.capacityTokensPerSec(), 0, durationNanos, p.outputTokens(),
                charsPerToken);
        SplittableRandom batch = root.split();
        SplittableRandom noisy = root.split();
        if (contended) {
            poisson(out, batch, BATCH, BATCH, "batch", p.batchPrefixTokens(), p.batchUniqueTokens(),
                    p.batchShare() * p.capacityTokensPerSec(), 0, durationNanos, p.batchOutputTokens(), charsPerToken);
            bursts(out, noisy, p, charsPerToken);
        }
        out.sort(Comparator.comparingLong(ScheduledRequest::sendAtNanosFromStart));
        String description = String.format(Locale.ROOT, "C = %.0f prompt tokens/s (simulated, the 4-worker fleet's prefill "
                + "rate); %d chat tenants, each a private %d-token system prompt + %d-token question at %.0f %% of C "
                + "(Poisson); 1 interactive tenant (%d + %d tokens) at %.0f %% of C%s; %d output tokens (batch %d); %.0f s.",
                p.capacityTokensPerSec(), p.chatTenants(), p.chatPrefixTokens(), p.questionTokens(), 100 * p.chatShare(),
                p.interactivePrefixTokens(), p.questionTokens(), 100 * p.interactiveShare(),
                contended ? String.format(Locale.ROOT, "; 1 batch tenant (%d shared + %d unique tokens) offered %.1fx C "
                        + "throughout; 1 noisy tenant in the chat class with unique %d-token prompts at %.1fx C in bursts every "
                        + "%.1f s from %.0f s to %.0f s", p.batchPrefixTokens(), p.batchUniqueTokens(), p.batchShare(),
                        p.noisyPromptTokens(), p.noisyShare(), p.burstPeriodMs() / 1e3, p.noiseStartMs() / 1e3,
                        p.noiseEndMs() / 1e3) : " (isolated: no noisy or batch tenant)",
                p.outputTokens(), p.batchOutputTokens(), p.durationMs() / 1e3);
        return new Workload(out, description);
    }

    /** Poisson arrivals of one tenant whose prompt is its private prefix plus a fresh suffix. */
    private static void poisson(List<ScheduledRequest> out, SplittableRandom r, String tenant, String role, String priority,
            int prefixTokens, int suffixTokens, double tokensPerSec, long fromNanos, long toNanos, int outputTokens,
            double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(r, charsPerToken);
        String prefix = "You are the assistant of tenant " + tenant + ". " + prompts.text(prefixTokens);
        double reqPerSec = tokensPerSec / (prefixTokens + suffixTokens);
        Map<String, String> headers = headers(tenant, priority);
        double at = fromNanos;
        while (true) {
            at += -Math.log(1.0 - r.nextDouble()) / reqPerSec * 1e9;
            if (at >= toNanos) {
                return;
            }
            byte[] body = ChatRequests.body(List.of(new ChatRequests.Message("system", prefix),
                    new ChatRequests.Message("user", prompts.text(suffixTokens))), outputTokens, null);
            out.add(new ScheduledRequest((long) at, ChatRequests.PATH, body, role, tenant, headers));
        }
    }

    /** The noisy tenant: unique prompts, one burst per period, asking for interactive (clamped to default). */
    private static void bursts(List<ScheduledRequest> out, SplittableRandom r, Params p, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(r, charsPerToken);
        double perBurst = p.noisyShare() * p.capacityTokensPerSec() * p.burstPeriodMs() / 1e3 / p.noisyPromptTokens();
        Map<String, String> headers = headers(NOISY, "interactive");
        double carry = 0;
        for (long start = p.noiseStartMs(); start < p.noiseEndMs(); start += p.burstPeriodMs()) {
            carry += perBurst;
            int n = (int) Math.floor(carry);
            carry -= n;
            for (int i = 0; i < n; i++) {
                long at = (start + (long) (r.nextDouble() * p.burstSpreadMs())) * NANOS_PER_MS;
                byte[] body = ChatRequests.body(List.of(new ChatRequests.Message("user", prompts.text(p.noisyPromptTokens()))),
                        p.outputTokens(), null);
                out.add(new ScheduledRequest(at, ChatRequests.PATH, body, NOISY, NOISY, headers));
            }
        }
    }

    /** One tenant of the fairness sub-scenario: backlogged, with its own weight and request shape. */
    public record FairnessTenant(String name, double weight, int promptTokens, int outputTokens, double share) {}

    /** The four backlogged tenants, weights 1:1:2:4, different shapes, each offered {@code share} x C. */
    public static List<FairnessTenant> fairnessTenants(boolean quick) {
        int scale = quick ? 4 : 1;
        return List.of(new FairnessTenant("fair-w1a", 1, 2_048 / scale, 64, 0.6),
                new FairnessTenant("fair-w1b", 1, 512 / scale, 256 / scale, 0.6),
                new FairnessTenant("fair-w2", 2, 4_096 / scale, 16, 0.6),
                new FairnessTenant("fair-w4", 4, 1_024 / scale, 128 / scale, 0.6));
    }

    /** Poisson arrivals of every fairness tenant (each with a unique prompt per request) for {@code durationMs}. */
    public static Workload fairness(List<FairnessTenant> tenants, double capacityTokensPerSec, long durationMs, long seed,
            double charsPerToken) {
        SplittableRandom root = new SplittableRandom(seed ^ 0x5EEDFA1L);
        List<ScheduledRequest> out = new ArrayList<>();
        for (FairnessTenant t : tenants) {
            poisson(out, root.split(), t.name(), t.name(), "default", 0, t.promptTokens(),
                    t.share() * capacityTokensPerSec, 0, durationMs * NANOS_PER_MS, t.outputTokens(), charsPerToken);
        }
        out.sort(Comparator.comparingLong(ScheduledRequest::sendAtNanosFromStart));
        StringBuilder d = new StringBuilder("fairness: backlogged tenants in the default class, each offered ");
        d.append(String.format(Locale.ROOT, "%.1fx C:", tenants.get(0).share()));
        for (FairnessTenant t : tenants) {
            d.append(String.format(Locale.ROOT, " %s (weight %.0f, %d prompt + %d output tokens)", t.name(), t.weight(),
                    t.promptTokens(), t.outputTokens()));
        }
        return new Workload(out, d.append(String.format(Locale.ROOT, "; %.0f s.", durationMs / 1e3)).toString());
    }
}
