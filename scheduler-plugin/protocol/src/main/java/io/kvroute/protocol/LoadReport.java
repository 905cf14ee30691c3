package io.kvroute.protocol;

/**
 * One decoded load report for one rank (wire field names in {@code docs/load-report-protocol.md}).
 * Extension fields are 0 when {@code hasExtension} is false.
 */
public record LoadReport(long seq, int numRunningReqs, int numWaitingReqs, long numTokens, long maxTotalNumTokens,
                  int attnDpRank, boolean hasExtension, long numWaitingUncachedTokens, long numTotalTokens,
                  int maxRunningRequests, long totalPrefillUncachedTokens, long totalPrefillBusyUs) {}
