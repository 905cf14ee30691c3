package io.kvroute.router.policy;

import io.kvroute.router.prefix.PrefixMatch;

/**
 * What one cache-aware decision saw, for the lead's metrics and the post-dispatch prefix insert.
 * Immutable; holds the request's {@link PrefixMatch} (tree nodes), so keep it only for the request.
 *
 * @param label the {@code kvroute_cache_aware_decisions_total} decision label
 * @param gateRejections owners rejected by the queue gate ({@code --worker-queue-limit})
 * @param admissionRejections owners that passed the gate but failed hard admission (capacity)
 * @param pressureGuardOverrides times a rival within the switch margin displaced the current best
 * @param selectedMatchedTokens matched tokens (estimated in char modes) of the selected worker
 * @param bestMatchedTokens the longest match over the routable fleet
 * @param prefixMatch the one match of this request, or null when the request had no key
 * @param gateBlind true when the gate is set but no routable worker had a fresh sample
 * @param matchIndex which index gave the selected worker's match: {@link #INDEX_EXACT} (engine KV
 *     events) or {@link #INDEX_APPROXIMATE} (the router's prefix tree)
 * @param dataParallelRank the selected worker's dp rank that holds the match, when the exact index
 *     saw it on one rank of several (pinned for engines that take a rank by header), else -1
 */
public record CacheAwareDetail(String label, int gateRejections, int admissionRejections, int pressureGuardOverrides,
                               long selectedMatchedTokens, long bestMatchedTokens, PrefixMatch prefixMatch,
                               boolean gateBlind, String matchIndex, int dataParallelRank) {

    public CacheAwareDetail(String label, int gateRejections, int admissionRejections, int pressureGuardOverrides,
                            long selectedMatchedTokens, long bestMatchedTokens, PrefixMatch prefixMatch, boolean gateBlind,
                            String matchIndex) {
        this(label, gateRejections, admissionRejections, pressureGuardOverrides, selectedMatchedTokens,
                bestMatchedTokens, prefixMatch, gateBlind, matchIndex, -1);
    }

    public static final String INDEX_EXACT = "exact";
    public static final String INDEX_APPROXIMATE = "approximate";

    public CacheAwareDetail(String label, int gateRejections, int admissionRejections, int pressureGuardOverrides,
                            long selectedMatchedTokens, long bestMatchedTokens, PrefixMatch prefixMatch, boolean gateBlind) {
        this(label, gateRejections, admissionRejections, pressureGuardOverrides, selectedMatchedTokens,
                bestMatchedTokens, prefixMatch, gateBlind, INDEX_APPROXIMATE);
    }

    /** An owner passed gate and admission and won the tournament. */
    public static final String CACHE_HIT = "cache_hit";
    /** No worker held enough of the prefix. */
    public static final String CACHE_MISS = "cache_miss";
    /** Owners existed but all were queued or full; the request went off-owner while someone was free. */
    public static final String CACHE_WORKER_QUEUED = "cache_worker_queued";
    /** The whole routable fleet was queueing (fleet-saturation tier, or fallback over the whole pool). */
    public static final String ALL_QUEUED = "all_queued";
    /** {@code --saturation-queue-floor} kept the request on a queued owner. */
    public static final String SATURATION_PIN = "saturation_pin";
}
