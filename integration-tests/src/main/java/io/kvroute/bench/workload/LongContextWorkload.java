package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Very long chat prompts (about 55k, 90k and 125k tokens), first on an idle fleet one at a time,
 * then again while background streams keep the fleet busy. Long prompts have class {@code long}
 * and tags {@code idle-55k} / {@code loaded-55k}; the background streams have class
 * {@code background} and tag {@code background}. Pure and seeded.
 */
public final class LongContextWorkload {

    private static final long MILLIS = 1_000_000L;

    private LongContextWorkload() {}

    /**
     * @param promptTokens the long prompt sizes
     * @param gapMillis spacing of long prompts within a phase (simulated), chosen so each finishes first
     * @param backgroundStreams concurrent background streams during the loaded phase
     * @param backgroundOutputTokens output of each background stream (long enough to span the phase)
     */
    public record Params(List<Integer> promptTokens, int outputTokens, long gapMillis, int backgroundStreams,
            int backgroundPromptTokens, int backgroundOutputTokens) {

        public Params {
            promptTokens = List.copyOf(promptTokens);
        }

        public static Params full() {
            return new Params(List.of(55_000, 90_000, 125_000), 64, 15_000, 8, 512, 4_096);
        }

        /** --quick: prompts a quarter as long. */
        public static Params quick() {
            return new Params(List.of(13_750, 22_500, 31_250), 32, 4_000, 8, 256, 1_024);
        }
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        List<ScheduledRequest> requests = new ArrayList<>();
        long at = 0;
        for (int tokens : p.promptTokens()) {
            requests.add(longPrompt(at, prompts.text(tokens), p.outputTokens(), "idle-" + label(tokens)));
            at += p.gapMillis() * MILLIS;
        }
        long loadedStart = at;
        for (int b = 0; b < p.backgroundStreams(); b++) {
            requests.add(new ScheduledRequest(loadedStart + b * MILLIS, ChatRequests.PATH,
                    ChatRequests.userPrompt(prompts.text(p.backgroundPromptTokens()), p.backgroundOutputTokens()),
                    "background", "background"));
        }
        at = loadedStart + 500 * MILLIS; // let the background streams reach decode first
        for (int tokens : p.promptTokens()) {
            requests.add(longPrompt(at, prompts.text(tokens), p.outputTokens(), "loaded-" + label(tokens)));
            at += p.gapMillis() * MILLIS;
        }
        String description = String.format("long-context: chat prompts of %s tokens, output %d, sent %d ms apart on an idle "
                + "fleet, then again from 500 ms after %d background streams (%d-token prompt, %d output tokens) "
                + "start (simulated time).", p.promptTokens(), p.outputTokens(), p.gapMillis(), p.backgroundStreams(),
                p.backgroundPromptTokens(), p.backgroundOutputTokens());
        return new Workload(requests, description);
    }

    private static ScheduledRequest longPrompt(long atNanos, String text, int outputTokens, String tag) {
        return new ScheduledRequest(atNanos, ChatRequests.PATH, ChatRequests.userPrompt(text, outputTokens), "long", tag);
    }

    private static String label(int tokens) {
        return Math.round(tokens / 1000.0) + "k";
    }
}
