package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * Many tenants, each with a long shared prefix (a system prompt reused by all its requests) and a
 * short unique suffix, with Poisson arrivals whose rate steps from below to above the fleet's
 * estimated capacity. Each request is tagged with its step ({@code step-2@15.0rps}) so reports
 * show latency and throughput per offered rate. Pure and seeded.
 */
public final class SaturationWorkload {

    private SaturationWorkload() {}

    /**
     * @param capacityReqPerSec the fleet's estimated sustainable rate (simulated); steps are multiples of it
     * @param rateMultipliers offered rate of each step as a multiple of capacity, ascending
     * @param stepMillis duration of each step (simulated)
     */
    public record Params(int tenants, int prefixTokens, int suffixTokens, int outputTokens,
            double capacityReqPerSec, List<Double> rateMultipliers, long stepMillis) {

        public Params {
            rateMultipliers = List.copyOf(rateMultipliers);
            if (!(capacityReqPerSec > 0)) {
                throw new IllegalArgumentException("capacityReqPerSec must be > 0: " + capacityReqPerSec);
            }
        }

        public static Params full(double capacityReqPerSec) {
            return new Params(16, 4_096, 128, 64, capacityReqPerSec, List.of(0.5, 0.75, 1.0, 1.25, 1.5), 10_000);
        }

        public static Params quick(double capacityReqPerSec) {
            return new Params(6, 1_024, 64, 32, capacityReqPerSec, List.of(0.5, 1.0, 1.5), 4_000);
        }
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        List<String> prefixes = new ArrayList<>(p.tenants());
        for (int t = 0; t < p.tenants(); t++) {
            prefixes.add("You are the assistant of tenant " + t + ". " + prompts.text(p.prefixTokens()));
        }
        List<ScheduledRequest> requests = new ArrayList<>();
        long stepNanos = p.stepMillis() * 1_000_000L;
        for (int step = 0; step < p.rateMultipliers().size(); step++) {
            double rate = p.capacityReqPerSec() * p.rateMultipliers().get(step);
            String tag = String.format(Locale.ROOT, "step-%d@%.1frps", step + 1, rate);
            long stepStart = step * stepNanos;
            double at = 0;
            while (true) {
                at += -Math.log(1.0 - random.nextDouble()) / rate * 1e9; // exponential gap: Poisson arrivals
                if (at >= stepNanos) {
                    break;
                }
                int tenant = random.nextInt(p.tenants());
                List<ChatRequests.Message> messages = List.of(
                        new ChatRequests.Message("system", prefixes.get(tenant)),
                        new ChatRequests.Message("user", prompts.text(p.suffixTokens())));
                requests.add(new ScheduledRequest(stepStart + (long) at, ChatRequests.PATH,
                        ChatRequests.body(messages, p.outputTokens(), "tenant-" + tenant), "", tag));
            }
        }
        String description = String.format(Locale.ROOT, "saturation: %d tenants, each a %d-token shared system prompt plus a "
                + "%d-token unique question, output %d tokens; Poisson arrivals stepped through %s x an estimated "
                + "capacity of %.1f req/s, %d ms per step (simulated); %d requests.",
                p.tenants(), p.prefixTokens(), p.suffixTokens(), p.outputTokens(), p.rateMultipliers(),
                p.capacityReqPerSec(), p.stepMillis(), requests.size());
        return new Workload(requests, description);
    }
}
