package io.kvroute.protocol;

import java.util.List;

/**
 * One decoded {@code KVEventBatch} {@code [ts, [events...], data_parallel_rank?]} with the sequence
 * number of the frame it came in.
 *
 * @param rank the batch's own dp rank, or -1 when absent (the socket's rank is the rank)
 */
public record KvEventBatch(long seq, double ts, List<KvEvent> events, int rank) {}
