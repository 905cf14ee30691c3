package io.kvroute.bench.workload;

import io.kvroute.bench.client.ScheduledRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Multi-turn chats over many LoRA adapters: each session talks to one adapter, drawn with Zipf
 * popularity (rank k with weight 1 / k^s), named in {@code model} (vLLM style). Sessions arrive as a
 * Poisson process; each opens with the adapter's short task instruction and a document of its own, and
 * each turn adds a question and the previous answer, so a session's later turns share its prefix and
 * sessions share nothing above the router's match threshold.
 */
public final class LoraWorkload {

    private static final long MILLIS = 1_000_000L;

    private LoraWorkload() {}

    /**
     * @param adapters number of adapters ({@link #adapter} names them by popularity rank)
     * @param zipfS Zipf exponent of adapter popularity
     * @param sessionsPerSec Poisson arrival rate of sessions (simulated)
     * @param thinkMillis gap between a session's turns (simulated)
     */
    public record Params(int adapters, double zipfS, int sessions, int turns, double sessionsPerSec, long thinkMillis,
            int instructionTokens, int documentTokens, int userTokens, int answerTokens) {

        /** 32 adapters, Zipf 1.1: the brief's fleet of 8 workers with 4 slots each holds exactly 32. */
        public static Params full() {
            return new Params(32, 1.1, 480, 4, 10, 2_000, 48, 768, 64, 24);
        }

        public static Params quick() {
            return new Params(12, 1.1, 48, 3, 8, 800, 48, 256, 32, 12);
        }
    }

    /** The adapter of popularity rank {@code k} (0 = most popular). */
    public static String adapter(int k) {
        return "lora-" + k;
    }

    public static Workload generate(Params p, RandomGenerator random, double charsPerToken) {
        PromptBuilder prompts = new PromptBuilder(random, charsPerToken);
        double[] cumulative = new double[p.adapters()];
        double total = 0;
        for (int k = 0; k < p.adapters(); k++) {
            total += 1.0 / Math.pow(k + 1, p.zipfS());
            cumulative[k] = total;
        }
        List<String> instructions = new ArrayList<>();
        for (int k = 0; k < p.adapters(); k++) {
            instructions.add("You are adapter " + k + ". " + prompts.text(p.instructionTokens()));
        }
        List<ScheduledRequest> requests = new ArrayList<>(p.sessions() * p.turns());
        double atMillis = 0;
        for (int s = 0; s < p.sessions(); s++) {
            atMillis += -Math.log(1 - random.nextDouble()) * 1000.0 / p.sessionsPerSec();
            double u = random.nextDouble() * total;
            int k = 0;
            while (cumulative[k] < u) {
                k++;
            }
            String user = "session-" + s;
            List<ChatRequests.Message> history = new ArrayList<>();
            history.add(new ChatRequests.Message("system", instructions.get(k) + " Document: "
                    + prompts.text(p.documentTokens())));
            for (int t = 0; t < p.turns(); t++) {
                if (t > 0) {
                    history.add(new ChatRequests.Message("assistant", prompts.text(p.answerTokens())));
                }
                history.add(new ChatRequests.Message("user", prompts.text(p.userTokens())));
                long sendAt = Math.round((atMillis + t * p.thinkMillis()) * MILLIS);
                requests.add(new ScheduledRequest(sendAt, ChatRequests.PATH,
                        ChatRequests.body(adapter(k), history, p.answerTokens(), user), ""));
            }
        }
        requests.sort((a, b) -> Long.compare(a.sendAtNanosFromStart(), b.sendAtNanosFromStart()));
        String description = String.format(java.util.Locale.ROOT, "lora: %d sessions x %d turns over %d adapters with "
                + "Zipf(s=%.1f) popularity, named in `model`; sessions arrive Poisson at %.0f/s, turns %d ms apart; each "
                + "session opens with its adapter's %d-token instruction and a %d-token document of its own, each turn "
                + "adds a %d-token question and the previous %d-token answer.", p.sessions(), p.turns(), p.adapters(),
                p.zipfS(), p.sessionsPerSec(), p.thinkMillis(), p.instructionTokens(), p.documentTokens(),
                p.userTokens(), p.answerTokens());
        return new Workload(requests, description);
    }
}
