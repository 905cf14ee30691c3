package io.kvroute.protocol;

/**
 * One engine load report for one attention-DP rank, as SGLang's scheduler publishes it.
 *
 * <p>Field order is the wire order (the repository's {@code docs/load-report-protocol.md}). The optional
 * {@link Extension} is all or nothing: either the five extension fields are all sent, or none.
 *
 * @param numRunningReqs requests currently in the running batch
 * @param numWaitingReqs requests waiting in the prefill queue
 * @param numTokens KV cache tokens in use
 * @param maxTotalNumTokens KV cache capacity in tokens; 0 means unknown
 * @param attnDpRank the attention data-parallel rank this report describes
 * @param ext the kvroute extension, or {@code null} for the SGLang base form
 */
public record LoadStat(int numRunningReqs, int numWaitingReqs, long numTokens, long maxTotalNumTokens,
                       int attnDpRank, Extension ext) {

    public LoadStat {
        if (numRunningReqs < 0 || numWaitingReqs < 0 || numTokens < 0 || maxTotalNumTokens < 0 || attnDpRank < 0) {
            throw new IllegalArgumentException("negative load field: running=" + numRunningReqs + " waiting="
                    + numWaitingReqs + " tokens=" + numTokens + " max=" + maxTotalNumTokens + " rank=" + attnDpRank);
        }
    }

    /** The base (SGLang) form without the extension. */
    public static LoadStat base(int numRunningReqs, int numWaitingReqs, long numTokens, long maxTotalNumTokens,
                                int attnDpRank) {
        return new LoadStat(numRunningReqs, numWaitingReqs, numTokens, maxTotalNumTokens, attnDpRank, null);
    }

    /**
     * The kvroute extension.
     *
     * @param numWaitingUncachedTokens prompt tokens of waiting requests not covered by the prefix cache
     * @param numTotalTokens KV tokens in use plus those reserved by admitted requests
     * @param maxRunningRequests the engine's running-request limit; 0 means unknown
     * @param totalPrefillUncachedTokens monotonic counter of uncached tokens prefilled since start
     * @param totalPrefillBusyUs monotonic counter of microseconds spent in prefill since start
     */
    public record Extension(long numWaitingUncachedTokens, long numTotalTokens, int maxRunningRequests,
                            long totalPrefillUncachedTokens, long totalPrefillBusyUs) {
        public Extension {
            if (numWaitingUncachedTokens < 0 || numTotalTokens < 0 || maxRunningRequests < 0
                    || totalPrefillUncachedTokens < 0 || totalPrefillBusyUs < 0) {
                throw new IllegalArgumentException("negative extension field: " + numWaitingUncachedTokens + ","
                        + numTotalTokens + "," + maxRunningRequests + "," + totalPrefillUncachedTokens + ","
                        + totalPrefillBusyUs);
            }
        }
    }
}
