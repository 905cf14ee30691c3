package io.kvroute.router.prefix;

import java.util.HashMap;
import java.util.Map;

/**
 * Result of one {@link PrefixIndex#match} walk: for each worker, how many leading key elements it
 * holds. Immutable; routing reads its hit information from this same object, never matching twice.
 */
public final class PrefixMatch {
    private final int keyLength;
    private final String[] workers;
    private final int[] lengths;
    private final long[] lastTicks;
    private final WalkHint hint;

    /**
     * Where the walk went, so {@link PrefixIndex#insertMatched} can skip comparing again when the
     * tree's shape is unchanged. Holds tree nodes: keep a match only for the request's duration.
     */
    record WalkHint(PrefixIndex index, long structureVersion, PrefixKey key, Node lastFull,
            int fullDepth, Node partial, int partialEnd) {}

    PrefixMatch(int keyLength, String[] workers, int[] lengths, long[] lastTicks, WalkHint hint) {
        this.keyLength = keyLength;
        this.workers = workers;
        this.lengths = lengths;
        this.lastTicks = lastTicks;
        this.hint = hint;
    }

    WalkHint hint() {
        return hint;
    }

    public int keyLength() {
        return keyLength;
    }

    /** Matched key elements held by the worker; 0 when it holds nothing along the key. */
    public int matchedLength(String workerId) {
        // The names are the ids the index was given, usually the very instances callers ask with: a
        // reference scan first, then by value (a walk can list a thousand owners).
        for (int i = 0; i < workers.length; i++) {
            if (workers[i] == workerId) {
                return lengths[i];
            }
        }
        for (int i = 0; i < workers.length; i++) {
            if (workers[i].equals(workerId)) {
                return lengths[i];
            }
        }
        return 0;
    }

    /** How many workers the walk met (some may have a matched length of 0). */
    public int ownerCount() {
        return workers.length;
    }

    /**
     * The index clock's tick when the {@code i}-th worker's deepest matched node was last recorded for it
     * (an insert: the router's dispatch of a prompt through that node), {@code 0 <= i < ownerCount()}.
     */
    public long tickAt(int i) {
        return lastTicks[i];
    }

    /** The {@code i}-th worker the walk met, {@code 0 <= i < ownerCount()}. */
    public String ownerAt(int i) {
        return workers[i];
    }

    /** The matched key elements of {@link #ownerAt}{@code (i)}. */
    public int lengthAt(int i) {
        return lengths[i];
    }

    /** {@code matchedLength / keyLength}; 0 for an empty key. */
    public double matchRatio(String workerId) {
        return keyLength == 0 ? 0.0 : (double) matchedLength(workerId) / keyLength;
    }

    /** Workers with a positive matched length. */
    public Map<String, Integer> matchedByWorker() {
        Map<String, Integer> out = new HashMap<>(workers.length * 2);
        for (int i = 0; i < workers.length; i++) {
            if (lengths[i] > 0) {
                out.put(workers[i], lengths[i]);
            }
        }
        return Map.copyOf(out);
    }

    /** The worker with the longest match (first on ties), or null when nothing matched. */
    public String bestWorker() {
        String best = null;
        int bestLength = 0;
        for (int i = 0; i < workers.length; i++) {
            if (lengths[i] > bestLength) {
                best = workers[i];
                bestLength = lengths[i];
            }
        }
        return best;
    }

    /** The longest matched length over all workers. */
    public int maxMatchedLength() {
        int max = 0;
        for (int length : lengths) {
            max = Math.max(max, length);
        }
        return max;
    }

    @Override
    public String toString() {
        return "PrefixMatch{keyLength=" + keyLength + ", matched=" + matchedByWorker() + "}";
    }
}
