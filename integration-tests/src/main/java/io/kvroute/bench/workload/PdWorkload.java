package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * A mixed long/short workload for a prefill/decode disaggregated fleet: requests at a fixed
 * interval; every fourth has a long prompt (class {@code long}), the rest short prompts (class
 * {@code short}); every third short request asks for a long answer (tag {@code long-output}) that
 * spans several decode segments when the decode workers end segments after fewer tokens, so the
 * router must dispatch continuations. Pure and seeded.
 */
public final class PdWorkload {

    private static final long MILLIS = 1_000_000L;

    private PdWorkload() {}

    /**
     * @param intervalMillis spacing of requests (simulated)
     * @param longOutputTokens output of a {@code long-output} request (several decode segments)
     */
    public record Params(int requests, long intervalMillis, int longPromptTokens, int shortPromptTokens,
            int outputTokens, int longOutputTokens) {

        public static Params full() {
            return new Params(96, 25, 8_192, 256, 64, 640);
        }

        public static Params quick() {
            return new Params(32, 25, 4_096, 256, 32, 320);
        }
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        List<ScheduledRequest> requests = new ArrayList<>(p.requests());
        int shortIndex = 0;
        for (int i = 0; i < p.requests(); i++) {
            long at = i * p.intervalMillis() * MILLIS;
            if (i % 4 == 0) {
                requests.add(new ScheduledRequest(at, ChatRequests.PATH,
                        ChatRequests.userPrompt(prompts.text(p.longPromptTokens()), p.outputTokens()), "long", "short-output"));
            } else {
                boolean longOutput = shortIndex++ % 3 == 0;
                requests.add(new ScheduledRequest(at, ChatRequests.PATH,
                        ChatRequests.userPrompt(prompts.text(p.shortPromptTokens()),
                                longOutput ? p.longOutputTokens() : p.outputTokens()),
                        "short", longOutput ? "long-output" : "short-output"));
            }
        }
        String description = String.format("pd: %d requests %d ms apart; every fourth a long prompt (%d tokens), the rest "
                + "short (%d tokens); output %d tokens, except every third short request asks for %d (tag long-output, "
                + "several decode segments) (simulated time).", p.requests(), p.intervalMillis(), p.longPromptTokens(),
                p.shortPromptTokens(), p.outputTokens(), p.longOutputTokens());
        return new Workload(requests, description);
    }
}
