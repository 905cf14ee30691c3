package io.kvroute.router.kvevents;

import java.time.Duration;

/**
 * Settings of the {@link KvEventsPlane}.
 *
 * @param silence a publisher that sends nothing this long is reported (metric + warning) and resubscribed
 * @param replayTimeout a replay that has not ended by then fails (the publisher becomes unknown)
 * @param maxBlocksPerRank blocks one engine dp rank may hold in the index; stores beyond are refused
 * @param maxBufferedBatches live batches kept while a replay runs; more fail the replay
 * @param maxReplayBatches answers one replay may send before it is cut off as never-ending
 * @param pollTimeout how long the events thread waits for a message
 */
public record KvEventsConfig(Duration silence, Duration replayTimeout, int maxBlocksPerRank, int maxBufferedBatches,
                             long maxReplayBatches, Duration pollTimeout) {

    public static KvEventsConfig defaults() {
        return new KvEventsConfig(Duration.ofSeconds(60), Duration.ofSeconds(5), 1 << 20, 10_000, 100_000,
                Duration.ofMillis(20));
    }

    public KvEventsConfig withSilence(Duration d) {
        return new KvEventsConfig(d, replayTimeout, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches, pollTimeout);
    }

    public KvEventsConfig withReplayTimeout(Duration d) {
        return new KvEventsConfig(silence, d, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches, pollTimeout);
    }

    public KvEventsConfig withMaxBlocksPerRank(int n) {
        return new KvEventsConfig(silence, replayTimeout, n, maxBufferedBatches, maxReplayBatches, pollTimeout);
    }

    public KvEventsConfig withMaxReplayBatches(long n) {
        return new KvEventsConfig(silence, replayTimeout, maxBlocksPerRank, maxBufferedBatches, n, pollTimeout);
    }
}
