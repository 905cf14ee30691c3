package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sequence state machine on exact event sequences (no sockets; the sink records what it is told). */
class PublisherStreamTest {
    private final List<String> log = new ArrayList<>();
    private final PublisherStream.Sink sink = new PublisherStream.Sink() {
        @Override
        public void apply(KvEventBatch batch) {
            log.add("apply " + batch.seq());
        }

        @Override
        public void clear() {
            log.add("clear");
        }

        @Override
        public void requestReplay(long startSeq) {
            log.add("replay " + startSeq);
        }
    };

    private static KvEventBatch b(long seq) {
        return new KvEventBatch(seq, 0, List.of(), 0);
    }

    private static KvEventBatch cleared(long seq) {
        return new KvEventBatch(seq, 0, List.of(new KvEvent.AllBlocksCleared()), 0);
    }

    private PublisherStream stream(boolean replay) {
        return new PublisherStream(replay, 3, 1_000, 5, sink);
    }

    @Test
    void inOrderFromZero_isLive() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(1), 0);
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).containsExactly("apply 0", "apply 1");
    }

    @Test
    void gap_isReplayedThenBufferedLiveBatchesFollow() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(3), 0); // 1 and 2 missed
        s.onLive(b(4), 0); // buffered during the replay
        assertThat(s.state()).isEqualTo(PublisherStream.State.REPLAYING);
        s.onReplay(1, b(1));
        s.onReplay(2, b(2));
        s.onReplay(3, b(3)); // the replay also holds what we buffered
        s.onReplayEnd();
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).containsExactly("apply 0", "replay 1", "apply 1", "apply 2", "apply 3", "apply 4");
        s.onLive(b(5), 0);
        assertThat(log).endsWith("apply 5");
        assertThat(s.gaps).isEqualTo(1);
        assertThat(s.replaysCompleted).isEqualTo(1);
    }

    @Test
    void lateJoin_replaysFromZero() {
        PublisherStream s = stream(true);
        s.onLive(b(7), 0);
        assertThat(log).containsExactly("replay 0");
    }

    @Test
    void incompleteReplay_dropsToUnknown_clearsAndKeepsLaterBatches() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(5), 0);
        s.onReplay(3, b(3)); // the publisher no longer holds 1 and 2: what it holds is applied
        s.onReplay(4, b(4));
        s.onReplayEnd();
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        assertThat(log).containsExactly("apply 0", "replay 1", "clear", "apply 3", "apply 4", "apply 5");
        s.onLive(b(6), 0);
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        s.onLive(cleared(7), 0); // the engine emptied its cache: exact again
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        s.onLive(b(8), 0);
        assertThat(log).endsWith("apply 6", "apply 7", "apply 8");
    }

    @Test
    void holeBetweenReplayEndAndBufferedBatches_isUnknown() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(4), 0);
        s.onReplay(1, b(1));
        s.onReplayEnd(); // 2 and 3 never came
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
    }

    @Test
    void replayThatNeverEnds_isCutOffByCountAndByTime() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(100), 0);
        for (long q = 1; q <= 6; q++) {
            s.onReplay(q, b(q)); // more than maxReplayBatches = 5
        }
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);

        PublisherStream t = stream(true);
        t.onLive(b(0), 0);
        t.onLive(b(2), 0);
        t.onTick(999);
        assertThat(t.state()).isEqualTo(PublisherStream.State.REPLAYING);
        t.onTick(1_001);
        assertThat(t.state()).isEqualTo(PublisherStream.State.UNKNOWN);
    }

    @Test
    void anUnansweredReplay_isAskedForAgainFromZero_afterABackoffThatDoublesUntilLive() {
        PublisherStream s = stream(true); // replay timeout 1,000 ns
        s.onLive(b(0), 0);
        s.onLive(b(2), 0); // gap: replay from 1, never answered
        s.onTick(1_001);
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        s.onLive(b(3), 1_001); // kept while unknown
        s.onTick(1_500);
        s.onTick(2_000); // retry due at 1,001 + 1,000
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        log.clear();
        s.onTick(2_001);
        assertThat(s.state()).isEqualTo(PublisherStream.State.REPLAYING);
        assertThat(log).containsExactly("clear", "replay 0");
        assertThat(s.replayRetries).isEqualTo(1);

        s.onTick(3_002); // unanswered again: the next retry waits twice as long
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        s.onTick(5_001);
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        log.clear();
        s.onTick(5_002);
        assertThat(log).containsExactly("clear", "replay 0");

        s.onLive(b(4), 5_002); // buffered during the replay
        for (long q = 0; q <= 3; q++) {
            s.onReplay(q, b(q));
        }
        s.onReplayEnd();
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).containsExactly("clear", "replay 0", "apply 0", "apply 1", "apply 2", "apply 3", "apply 4");
        assertThat(s.replayRetries).isEqualTo(2);

        s.onLive(b(6), 6_000); // a later gap starts with the first backoff again
        s.onTick(7_001);
        log.clear();
        s.onTick(8_001);
        assertThat(log).containsExactly("clear", "replay 0");
    }

    @Test
    void theRetryBackoff_stopsGrowingAtItsCap() {
        PublisherStream s = stream(true);
        s.onLive(b(5), 0); // late join: replay from 0, never answered
        long now = 0;
        long lastWait = 0;
        for (int attempt = 0; attempt < 8; attempt++) {
            now += 1_001; // the replay times out
            s.onTick(now);
            long scheduledAt = now;
            while (s.state() != PublisherStream.State.REPLAYING) {
                now += 100;
                s.onTick(now);
            }
            lastWait = now - scheduledAt;
        }
        assertThat(lastWait).isBetween(1_000L * PublisherStream.MAX_RETRY_BACKOFF_FACTOR,
                1_000L * PublisherStream.MAX_RETRY_BACKOFF_FACTOR + 100);
    }

    @Test
    void anAnsweredButIncompleteReplay_isNotRetried() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(3), 0);
        s.onReplay(1, b(1)); // answered, then the answers stop
        s.onTick(1_001);
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        log.clear();
        for (long t = 1_100; t < 100_000; t += 100) {
            s.onTick(t);
        }
        assertThat(log).isEmpty();
        assertThat(s.replayRetries).isZero();
    }

    @Test
    void aReplayRequestThatCannotBeSent_isAskedForAgainLater() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(2), 0);
        s.onReplayUnavailable();
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        s.onTick(10);
        log.clear();
        s.onTick(1_010);
        assertThat(log).containsExactly("clear", "replay 0");
    }

    @Test
    void noReplaySocket_gapIsUnknownAtOnce() {
        PublisherStream s = stream(false);
        s.onLive(b(0), 0);
        s.onLive(b(2), 0);
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        assertThat(log).containsExactly("apply 0", "clear", "apply 2");
    }

    @Test
    void seqGoingBackwards_isARestart_clearedAndLiveFromZero() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        s.onLive(b(1), 0);
        s.onLive(b(2), 0);
        s.onLive(b(0), 0); // a duplicate (same timestamp): stale
        s.onLive(b(0, 1.0), 0); // a later batch numbered 0: a new process
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).containsExactly("apply 0", "apply 1", "apply 2", "clear", "apply 0");
        assertThat(s.stale).isEqualTo(1);
        assertThat(s.restarts).isEqualTo(1);
    }

    @Test
    void bufferOverflowDuringReplay_failsIt() {
        PublisherStream s = stream(true);
        s.onLive(b(0), 0);
        for (long q = 2; q <= 5; q++) {
            s.onLive(b(q), 0); // maxBuffered = 3
        }
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
    }

    private static KvEventBatch b(long seq, double ts) {
        return new KvEventBatch(seq, ts, List.of(), 0);
    }

    /** A quiet publisher with a replay socket is caught up at subscribe time, before it sends anything live. */
    @Test
    void onSubscribed_catchesUpFromZero_andAnEmptyReplayIsLive() {
        PublisherStream s = stream(true);
        s.onSubscribed(0);
        assertThat(s.state()).isEqualTo(PublisherStream.State.REPLAYING);
        s.onReplay(0, b(0));
        s.onReplay(1, b(1));
        s.onReplayEnd();
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).containsExactly("replay 0", "apply 0", "apply 1");
        s.onLive(b(2), 0);
        assertThat(log).endsWith("apply 2");

        PublisherStream idle = stream(true);
        idle.onSubscribed(0);
        idle.onReplayEnd(); // nothing buffered: the engine has published nothing
        assertThat(idle.state()).isEqualTo(PublisherStream.State.LIVE);
    }

    /** vLLM answers a start older than its buffer from its oldest kept batch: rebuild what it holds, then UNKNOWN. */
    @Test
    void replayStartingAboveTheRequest_rebuildsFromWhatIsHeld_andIsNotExact() {
        PublisherStream s = stream(true);
        s.onSubscribed(0);
        s.onReplay(3, b(3)); // 0..2 fell out of the publisher's buffer
        s.onReplay(4, b(4));
        s.onReplayEnd();
        assertThat(s.state()).isEqualTo(PublisherStream.State.UNKNOWN);
        assertThat(log).containsExactly("replay 0", "clear", "apply 3", "apply 4");
        assertThat(s.replaysFailed).isEqualTo(1);
        s.onLive(b(5), 0);
        assertThat(log).endsWith("apply 5");
    }

    /** Only a seq near 0 with a fresh timestamp is a new publisher process; any other older seq is stale. */
    @Test
    void olderSeq_isStaleUnlessItLooksLikeARestart() {
        PublisherStream s = stream(true);
        for (long q = 0; q <= 40; q++) {
            s.onLive(b(q, 100 + q), 0);
        }
        log.clear();
        s.onLive(b(30, 130), 0); // a duplicate far from 0
        s.onLive(b(3, 50), 0); // near 0 but older than what was applied: a frame of the old process
        assertThat(s.state()).isEqualTo(PublisherStream.State.LIVE);
        assertThat(log).isEmpty();
        assertThat(s.stale).isEqualTo(2);
        assertThat(s.restarts).isZero();
        s.onLive(b(41, 141), 0);
        assertThat(log).containsExactly("apply 41");
        s.onLive(b(0, 500), 0); // the engine restarted
        assertThat(s.restarts).isEqualTo(1);
        assertThat(log).endsWith("clear", "apply 0");
    }
}
