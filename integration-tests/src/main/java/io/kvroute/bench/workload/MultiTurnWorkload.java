package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Chat sessions whose history grows turn by turn, for cache-aware routing over several workers:
 * each session opens with a document, every turn appends a user question and (from the second turn)
 * the previous synthetic assistant answer, so turn k's prompt extends turn k-1's. Sessions start
 * staggered and turns follow a fixed think time (open loop: the next turn does not wait for the
 * answer; the think time is chosen longer than one answer). Each request names its session in
 * {@code user}. Tagged {@code turn-1..turn-T}. Pure and seeded.
 */
public final class MultiTurnWorkload {

    private static final long MILLIS = 1_000_000L;

    private MultiTurnWorkload() {}

    /**
     * @param documentTokens the session's opening document
     * @param userTokens each user question
     * @param answerTokens each answer ({@code max_tokens}, and the synthetic history entry)
     * @param sessionStaggerMillis gap between session starts (simulated)
     * @param thinkMillis gap between a session's turns (simulated)
     */
    public record Params(int sessions, int turns, int documentTokens, int userTokens, int answerTokens,
            long sessionStaggerMillis, long thinkMillis) {

        /**
         * Session counts are prime to the 4 workers of the multi-turn fleet: with 32 (or 12) sessions
         * arriving in a fixed order each round, round_robin sent every turn of a session to the same
         * worker and looked cache-aware by accident (hit rate 0.48, against 0.38-0.41 for random and
         * power_of_two).
         */
        public static Params full() {
            return new Params(31, 6, 2_048, 256, 128, 50, 4_000);
        }

        public static Params quick() {
            return new Params(13, 4, 1_024, 128, 64, 50, 2_000);
        }
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        List<ScheduledRequest> requests = new ArrayList<>(p.sessions() * p.turns());
        for (int s = 0; s < p.sessions(); s++) {
            String user = "session-" + s;
            List<ChatRequests.Message> history = new ArrayList<>();
            history.add(new ChatRequests.Message("system", "Answer questions about this document. " + prompts.text(p.documentTokens())));
            long startNanos = s * p.sessionStaggerMillis() * MILLIS;
            for (int t = 0; t < p.turns(); t++) {
                if (t > 0) {
                    history.add(new ChatRequests.Message("assistant", prompts.text(p.answerTokens())));
                }
                history.add(new ChatRequests.Message("user", prompts.text(p.userTokens())));
                long atNanos = startNanos + t * p.thinkMillis() * MILLIS;
                requests.add(new ScheduledRequest(atNanos, ChatRequests.PATH,
                        ChatRequests.body(history, p.answerTokens(), user), "", "turn-" + (t + 1)));
            }
        }
        requests.sort((a, b) -> Long.compare(a.sendAtNanosFromStart(), b.sendAtNanosFromStart()));
        String description = String.format("multi-turn: %d sessions x %d turns; a %d-token document opens each session, "
                + "each turn adds a %d-token question and the previous %d-token answer; sessions start %d ms apart, "
                + "turns %d ms apart (simulated, open loop); `user` names the session.",
                p.sessions(), p.turns(), p.documentTokens(), p.userTokens(), p.answerTokens(),
                p.sessionStaggerMillis(), p.thinkMillis());
        return new Workload(requests, description);
    }
}
