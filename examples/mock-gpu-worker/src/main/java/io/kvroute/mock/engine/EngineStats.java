package io.kvroute.mock.engine;

/**
 * Point-in-time engine counters. Field meanings follow SGLang's LoadStat (see
 * docs/load-report-protocol.md).
 *
 * @param numRunningReqs requests holding a running slot (decoding or mid-prefill)
 * @param numWaitingReqs requests waiting for admission or prefill
 * @param numUsedTokens KV tokens in use
 * @param numTotalTokens KV tokens in use plus the rest of admitted requests' reservations (SGLang's
 *     {@code num_total_tokens}, what the scheduler's admission compares against capacity)
 * @param maxTotalNumTokens KV capacity in tokens (0 = unknown)
 * @param numWaitingUncachedTokens sum over waiting requests of uncached prefill tokens
 * @param totalPrefillUncachedTokens cumulative uncached prefill tokens executed
 * @param totalPrefillBusyMicros cumulative (simulated) time spent computing prefill tokens, microseconds
 *     (decode and per-step overhead excluded, so tokens / busy is the prefill rate)
 * @param processedPrefillTokens the HRRN counter: prefill tokens submitted in batches
 * @param steps engine steps executed
 */
public record EngineStats(
        int numRunningReqs,
        int numWaitingReqs,
        long numUsedTokens,
        long numTotalTokens,
        long maxTotalNumTokens,
        long numWaitingUncachedTokens,
        long totalPrefillUncachedTokens,
        long totalPrefillBusyMicros,
        long processedPrefillTokens,
        long steps) {}
