package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;

/**
 * The latest report of one {@code (worker, rank)} with the receiver's clock at arrival and the
 * prefill throughput derived from the previous report of the same rank.
 *
 * @param prefillTokensPerUs uncached prefill tokens per busy microsecond, NaN while unknown
 */
record RankSample(LoadReport report, long receivedAtNanos, double prefillTokensPerUs) {

    /**
     * Derives the sample for {@code next}, given the previous sample of the same rank (or null).
     * Throughput = d(total_prefill_uncached_tokens) / d(total_prefill_busy_us) between the two
     * reports; when nothing was prefilled in between the previous estimate is kept; a counter that
     * went backwards (engine restart) forgets it.
     */
    static RankSample next(RankSample prev, LoadReport next, long receivedAtNanos) {
        double tput = Double.NaN;
        if (next.hasExtension() && prev != null && prev.report.hasExtension()) {
            long dTokens = next.totalPrefillUncachedTokens() - prev.report.totalPrefillUncachedTokens();
            long dBusyUs = next.totalPrefillBusyUs() - prev.report.totalPrefillBusyUs();
            if (dTokens < 0 || dBusyUs < 0) {
                tput = Double.NaN;
            } else if (dTokens > 0 && dBusyUs > 0) {
                tput = (double) dTokens / dBusyUs;
            } else {
                tput = prev.prefillTokensPerUs;
            }
        }
        return new RankSample(next, receivedAtNanos, tput);
    }
}
