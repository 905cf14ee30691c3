package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Very long chat prompts (about 55k, 90k and 125k tokens), first on an idle fleet one at a time
 * ({@code samples} rounds of the sizes in turn), then in {@code samples} loaded rounds in which all
 * sizes arrive together (1 ms apart, as concurrent long prompts queue at an engine's single
 * tokenizer in SGLang's router-side ingress tokenization measurement) while background streams
 * keep the fleet decoding. Long prompts have class
 * {@code long} and tags {@code idle-55k} / {@code loaded-55k} (one tag per (phase, size) cell, with
 * {@code samples} requests each); the background streams have class and tag {@code background}.
 * Pure and seeded.
 */
public final class LongContextWorkload {

    private static final long MILLIS = 1_000_000L;

    private LongContextWorkload() {}

    /**
     * @param promptTokens the long prompt sizes
     * @param gapMillis spacing of idle-phase prompts (simulated), chosen so each finishes first
     * @param backgroundStreams concurrent background streams during the loaded phase
     * @param backgroundOutputTokens output of each background stream (long enough to span the phase)
     * @param samples samples per (phase, size) cell
     * @param loadedRoundGapMillis spacing of the loaded rounds (each sends every size at once)
     */
    public record Params(List<Integer> promptTokens, int outputTokens, long gapMillis, int backgroundStreams,
            int backgroundPromptTokens, int backgroundOutputTokens, int samples, long loadedRoundGapMillis) {

        public Params {
            promptTokens = List.copyOf(promptTokens);
            if (samples < 1) {
                throw new IllegalArgumentException("samples must be >= 1: " + samples);
            }
        }

        public static Params full() {
            return new Params(List.of(55_000, 90_000, 125_000), 64, 2_500, 8, 512, 3_072, 5, 4_000);
        }

        /** --quick: prompts a quarter as long, 2 samples. */
        public static Params quick() {
            return new Params(List.of(13_750, 22_500, 31_250), 32, 800, 8, 256, 384, 2, 1_200);
        }
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        List<ScheduledRequest> requests = new ArrayList<>();
        long at = 0;
        for (int s = 0; s < p.samples(); s++) {
            for (int tokens : p.promptTokens()) {
                requests.add(longPrompt(at, prompts.text(tokens), p.outputTokens(), "idle-" + label(tokens)));
                at += p.gapMillis() * MILLIS;
            }
        }
        long loadedStart = at;
        for (int b = 0; b < p.backgroundStreams(); b++) {
            requests.add(new ScheduledRequest(loadedStart + b * MILLIS, ChatRequests.PATH,
                    ChatRequests.userPrompt(prompts.text(p.backgroundPromptTokens()), p.backgroundOutputTokens()),
                    "background", "background"));
        }
        at = loadedStart + 500 * MILLIS; // let the background streams reach decode first
        for (int s = 0; s < p.samples(); s++) {
            long sendAt = at;
            for (int tokens : p.promptTokens()) {
                requests.add(longPrompt(sendAt, prompts.text(tokens), p.outputTokens(), "loaded-" + label(tokens)));
                sendAt += MILLIS; // the sizes arrive together and queue behind each other
            }
            at += p.loadedRoundGapMillis() * MILLIS;
        }
        String description = String.format("long-context: chat prompts of %s tokens, output %d; idle: %d rounds of one "
                + "prompt at a time, %d ms apart; loaded: from 500 ms after %d background streams (%d-token prompt, %d "
                + "output tokens) start, %d rounds %d ms apart, each sending every size at once (1 ms apart) "
                + "(simulated time).", p.promptTokens(), p.outputTokens(), p.samples(), p.gapMillis(),
                p.backgroundStreams(), p.backgroundPromptTokens(), p.backgroundOutputTokens(), p.samples(),
                p.loadedRoundGapMillis());
        return new Workload(requests, description);
    }

    private static ScheduledRequest longPrompt(long atNanos, String text, int outputTokens, String tag) {
        return new ScheduledRequest(atNanos, ChatRequests.PATH, ChatRequests.userPrompt(text, outputTokens), "long", tag);
    }

    private static String label(int tokens) {
        return Math.round(tokens / 1000.0) + "k";
    }
}
