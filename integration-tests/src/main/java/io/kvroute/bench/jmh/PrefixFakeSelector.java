package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixKey;
import io.kvroute.router.prefix.PrefixMatch;

/**
 * The "decide" step of LightLLM's compressed-tree benchmark: LightLLM's load-balanced cache-aware selector reduced
 * to 4 fake prefill worker loads. Sample the prompt, match once, take the best-matching worker
 * unless it is busy (then the least loaded, reporting a zero hit, as LightLLM does after a
 * reassignment), record ownership. Key building from the String is part of the timed work.
 */
public final class PrefixFakeSelector {
    /** Waiting requests at which a fake worker counts as busy. */
    public static final int BUSY_WAITING_REQS = 16;

    public record Decision(String worker, int hitChars) {}

    private final PrefixIndex index;
    private final String[] workers;
    private final int[] numWaitingReqs;

    public PrefixFakeSelector(PrefixIndex index, String[] workers, int[] numWaitingReqs) {
        this.index = index;
        this.workers = workers;
        this.numWaitingReqs = numWaitingReqs;
    }

    /** Samples with {@link KeyBuilder#sampledKey} (int and byte forms in one loop). */
    public Decision select(String prompt) {
        return select(KeyBuilder.sampledKey(prompt, PrefixBenchData.STRIDE), prompt.length());
    }

    /** The same with the key already built (isolates the tree and the decision). */
    public Decision select(PrefixKey key, int promptChars) {
        return decide(index.match(key), promptChars);
    }

    /** With a plain int[] key (no byte form: byte edges compare with the scalar loop). */
    public Decision select(int[] key, int promptChars) {
        return decide(index.match(key), promptChars);
    }

    private Decision decide(PrefixMatch match, int promptChars) {
        String best = match.bestWorker();
        Decision decision;
        if (best != null && load(best) < BUSY_WAITING_REQS) {
            int hitChars = KeyBuilder.sampledDepthToChars(
                    match.matchedLength(best), PrefixBenchData.STRIDE, promptChars);
            decision = new Decision(best, hitChars);
        } else {
            decision = new Decision(leastLoaded(), 0);
        }
        index.insertMatched(match, decision.worker()); // reuses the walk: no second compare
        return decision;
    }

    private int load(String worker) {
        for (int i = 0; i < workers.length; i++) {
            if (workers[i].equals(worker)) {
                return numWaitingReqs[i];
            }
        }
        return Integer.MAX_VALUE;
    }

    private String leastLoaded() {
        int best = 0;
        for (int i = 1; i < workers.length; i++) {
            if (numWaitingReqs[i] < numWaitingReqs[best]) {
                best = i;
            }
        }
        return workers[best];
    }
}
