package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Settings of the {@link KvEventsPlane}.
 *
 * @param silence a publisher that sends nothing this long is reported (metric + warning) and resubscribed
 * @param replayTimeout a replay that has not ended by then fails (the publisher becomes unknown)
 * @param maxBlocksPerRank blocks one engine dp rank may hold in the index (and, in {@link KvHashMode#TOKENS}
 *        mode, engine hashes its hash map may hold); stores beyond are refused
 * @param maxBufferedBatches live batches kept while a replay runs; more fail the replay
 * @param maxReplayBatches answers one replay may send before it is cut off as never-ending
 * @param pollTimeout how long the events thread waits for a message
 * @param hashMode how a worker's blocks are keyed unless its subscription says otherwise
 * @param lowerTierWeight the fraction of a hit a block held only on a lower tier (CPU, disk...) counts
 *        for, 0..1; 0 = lower-tier events are not indexed at all
 */
public record KvEventsConfig(Duration silence, Duration replayTimeout, int maxBlocksPerRank, int maxBufferedBatches,
                             long maxReplayBatches, Duration pollTimeout, KvHashMode hashMode, double lowerTierWeight) {

    public KvEventsConfig {
        requireNonNull(hashMode, "hashMode");
        if (!(lowerTierWeight >= 0 && lowerTierWeight <= 1)) {
            throw new IllegalArgumentException("lowerTierWeight must be within 0..1, got " + lowerTierWeight);
        }
    }

    public KvEventsConfig(Duration silence, Duration replayTimeout, int maxBlocksPerRank, int maxBufferedBatches,
            long maxReplayBatches, Duration pollTimeout, KvHashMode hashMode) {
        this(silence, replayTimeout, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches, pollTimeout, hashMode, 0);
    }

    public static KvEventsConfig defaults() {
        return new KvEventsConfig(Duration.ofSeconds(60), Duration.ofSeconds(5), 1 << 20, 10_000, 100_000,
                Duration.ofMillis(20), KvHashMode.ENGINE);
    }

    public KvEventsConfig withLowerTierWeight(double weight) {
        return new KvEventsConfig(silence, replayTimeout, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches,
                pollTimeout, hashMode, weight);
    }

    public KvEventsConfig withSilence(Duration d) {
        return new KvEventsConfig(d, replayTimeout, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches, pollTimeout,
                hashMode, lowerTierWeight);
    }

    public KvEventsConfig withReplayTimeout(Duration d) {
        return new KvEventsConfig(silence, d, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches, pollTimeout,
                hashMode, lowerTierWeight);
    }

    public KvEventsConfig withMaxBlocksPerRank(int n) {
        return new KvEventsConfig(silence, replayTimeout, n, maxBufferedBatches, maxReplayBatches, pollTimeout,
                hashMode, lowerTierWeight);
    }

    public KvEventsConfig withMaxReplayBatches(long n) {
        return new KvEventsConfig(silence, replayTimeout, maxBlocksPerRank, maxBufferedBatches, n, pollTimeout,
                hashMode, lowerTierWeight);
    }

    public KvEventsConfig withHashMode(KvHashMode mode) {
        return new KvEventsConfig(silence, replayTimeout, maxBlocksPerRank, maxBufferedBatches, maxReplayBatches,
                pollTimeout, mode, lowerTierWeight);
    }
}
