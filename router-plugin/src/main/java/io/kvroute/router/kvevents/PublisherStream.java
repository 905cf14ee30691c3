package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventBatch;
import java.util.ArrayDeque;

/**
 * The sequence state machine of one KV-event publisher (one engine dp rank), with no transport:
 * the adapter feeds it live batches, replay answers and clock ticks, and it tells a {@link Sink}
 * what to apply, when to clear the publisher's blocks and when to ask for a replay (the replay protocol of vLLM
 * {@code vllm/distributed/kv_events.py}: a start seq below the oldest buffered batch cannot be served,
 * so the worker is then rebuilt from scratch).
 *
 * <ul>
 *   <li><b>NEW</b>: nothing seen. A publisher that has sent nothing holds nothing as far as the
 *       router can know, so NEW counts as exact (an idle dp rank must not hide its worker: real
 *       engines send no heartbeat on this socket). With a replay socket the owner calls
 *       {@link #onSubscribed} right away, which catches up from seq 0 (a router restarting next to
 *       a running engine). A first live seq of 0 is the publisher's whole history: apply, LIVE. A
 *       higher first seq means history was missed (a router that joined late, or PUB/SUB's slow
 *       joiner): replay from 0.</li>
 *   <li><b>LIVE</b>: the next seq applies. A jump forward is a gap: replay from the first missing
 *       seq, buffering live batches meanwhile (at most {@code maxBuffered}). A seq going backwards
 *       is a publisher restart only when it looks like one: a new engine process counts from 0, so
 *       the seq is below {@link #RESTART_SEQ_WINDOW} and its timestamp is later than the last
 *       applied batch's (a duplicate has the same); the publisher's blocks are then cleared and the stream starts over as NEW.
 *       Any other older seq (a duplicate, a frame from an earlier socket) is dropped as stale.</li>
 *   <li><b>REPLAYING</b>: answers must come in order from the requested seq; when the end marker
 *       arrives the buffered live batches must continue the sequence without a hole. A first answer
 *       above the requested seq means the publisher's buffer no longer holds the start (vLLM
 *       silently begins at its oldest kept batch, {@code vllm/distributed/kv_events.py}): the
 *       publisher's blocks are cleared, what the replay does hold is applied, and the stream ends
 *       UNKNOWN. A later answer that skips seqs, a hole after the end, a buffer overflow, more than
 *       {@code maxReplayBatches} answers (a replay that never ends) or no end within
 *       {@code replayTimeoutNanos} fail the replay.</li>
 *   <li><b>UNKNOWN</b>: after a failed replay, or a gap with no replay socket, the publisher's
 *       blocks are cleared: what it holds is not known, so the router must not claim exact matches
 *       for it (the approximate tree answers instead). Later batches are still applied, and an
 *       {@code AllBlocksCleared} (the engine is empty, so the index is exact again) or a restart
 *       (recognised as in LIVE) makes it LIVE again. A replay that failed without a single answer
 *       (the request or its answers were lost: a replay socket down or reconnecting) is asked for
 *       again from seq 0 after a backoff (the replay timeout, doubling per unanswered attempt up to
 *       {@link #MAX_RETRY_BACKOFF_FACTOR} times it, reset once LIVE), with the blocks cleared first,
 *       so a transient transport failure does not leave the publisher UNKNOWN for good. A replay
 *       that was answered but could not make the stream exact (truncated history, a hole) is not
 *       retried: asking again would get the same answer.</li>
 * </ul>
 * Not thread-safe: owned by the events thread. Time is the caller's nano clock.
 */
final class PublisherStream {

    enum State { NEW, LIVE, REPLAYING, UNKNOWN }

    /** What the stream asks of its owner. Called synchronously from the stream's methods. */
    interface Sink {
        void apply(KvEventBatch batch);

        /** Forget every block of this publisher. */
        void clear();

        /** Send a replay request for every batch with seq at least {@code startSeq}. */
        void requestReplay(long startSeq);
    }

    /** Seqs below this, with a later timestamp, read as a new publisher process (one counts from 0). */
    static final long RESTART_SEQ_WINDOW = 16;
    /** The retry backoff of unanswered replays grows to at most this many replay timeouts. */
    static final int MAX_RETRY_BACKOFF_FACTOR = 16;

    private final boolean replayAvailable;
    private final int maxBuffered;
    private final long replayTimeoutNanos;
    private final long maxReplayBatches;
    private final Sink sink;
    private final ArrayDeque<KvEventBatch> buffered = new ArrayDeque<>();
    private State state = State.NEW;
    private long expected;
    private long replayNext;
    private long replayed;
    private long replayDeadlineNanos;
    /** The first answer of the running replay started above the requested seq: the replay ends UNKNOWN. */
    private boolean replayTruncated;
    private boolean replayAnswered;
    /** The last replay failed unanswered: ask again after the backoff (from the next tick on). */
    private boolean retryWanted;
    private boolean retryScheduled;
    private long retryAtNanos;
    private long retryBackoffNanos;
    /** Timestamp of the last applied live batch, to tell a restart from a stale frame. */
    private double lastTs = Double.NEGATIVE_INFINITY;
    long gaps;
    long stale;
    long restarts;
    long replaysCompleted;
    long replaysFailed;
    long replayRetries;

    PublisherStream(boolean replayAvailable, int maxBuffered, long replayTimeoutNanos, long maxReplayBatches, Sink sink) {
        this.replayAvailable = replayAvailable;
        this.maxBuffered = maxBuffered;
        this.replayTimeoutNanos = replayTimeoutNanos;
        this.maxReplayBatches = maxReplayBatches;
        this.sink = requireNonNull(sink, "sink");
        this.retryBackoffNanos = replayTimeoutNanos;
    }

    State state() {
        return state;
    }

    /**
     * The live socket was just subscribed: with a replay socket, ask for the publisher's whole
     * buffered history (seq 0 on), so a publisher that stays quiet is still caught up.
     */
    void onSubscribed(long nowNanos) {
        if (state == State.NEW && replayAvailable) {
            buffered.clear();
            beginReplay(0, nowNanos);
        }
    }

    /** A batch that arrived on the live SUB socket. */
    void onLive(KvEventBatch b, long nowNanos) {
        switch (state) {
            case NEW -> startFromScratch(b, nowNanos);
            case LIVE -> {
                if (b.seq() == expected) {
                    applyLive(b);
                } else if (b.seq() > expected) {
                    gaps++;
                    startReplay(expected, b, nowNanos);
                } else if (looksLikeRestart(b)) {
                    restart(b, nowNanos);
                } else {
                    stale++;
                }
            }
            case REPLAYING -> {
                if (b.seq() < replayStartOrBufferedHead()) {
                    if (looksLikeRestart(b)) {
                        restart(b, nowNanos);
                    } else {
                        stale++;
                    }
                } else if (buffered.size() >= maxBuffered) {
                    buffered.add(b);
                    fail();
                } else {
                    buffered.add(b);
                }
            }
            case UNKNOWN -> {
                if (b.seq() >= expected) {
                    applyUnknown(b);
                } else if (looksLikeRestart(b)) {
                    restart(b, nowNanos);
                } else {
                    stale++;
                }
            }
        }
    }

    private boolean looksLikeRestart(KvEventBatch b) {
        return b.seq() >= 0 && b.seq() < RESTART_SEQ_WINDOW && b.ts() > lastTs;
    }

    /** One replay answer {@code [seq, payload]}; {@code b} is null when the payload did not decode. */
    void onReplay(long seq, KvEventBatch b) {
        if (state != State.REPLAYING || seq < replayNext) {
            return; // late answer of an earlier replay, or a duplicate
        }
        if (seq > replayNext && !replayAnswered && b != null) {
            // the publisher no longer holds the start: rebuild from what it holds, exactness is lost
            replayTruncated = true;
            sink.clear();
            replayNext = seq;
        }
        if (seq > replayNext || b == null || ++replayed > maxReplayBatches) {
            fail();
            return;
        }
        replayAnswered = true;
        sink.apply(b);
        replayNext++;
    }

    /** The replay's end marker. */
    void onReplayEnd() {
        if (state != State.REPLAYING) {
            return;
        }
        while (!buffered.isEmpty()) {
            KvEventBatch b = buffered.peek();
            if (b.seq() < replayNext) {
                buffered.poll(); // already replayed
            } else if (b.seq() == replayNext) {
                sink.apply(buffered.poll());
                replayNext++;
            } else {
                fail();
                return;
            }
        }
        expected = replayNext;
        if (replayTruncated) {
            replaysFailed++;
            state = State.UNKNOWN;
        } else {
            becomeLive();
            replaysCompleted++;
        }
    }

    /** Cuts off a replay that has not ended in time; asks again for one that was never answered. */
    void onTick(long nowNanos) {
        if (state == State.REPLAYING && nowNanos - replayDeadlineNanos > 0) {
            boolean unanswered = !replayAnswered;
            fail();
            retryWanted = unanswered;
        }
        if (state == State.UNKNOWN && retryWanted) {
            if (!retryScheduled) {
                retryScheduled = true;
                retryAtNanos = nowNanos + retryBackoffNanos;
                retryBackoffNanos = Math.min(retryBackoffNanos * 2, replayTimeoutNanos * MAX_RETRY_BACKOFF_FACTOR);
            } else if (nowNanos - retryAtNanos >= 0) {
                retryWanted = false;
                retryScheduled = false;
                replayRetries++;
                buffered.clear();
                sink.clear(); // the replay from 0 rebuilds everything, the batches applied since included
                beginReplay(0, nowNanos);
            }
        }
    }

    /** The replay request could not be sent (no route, socket error): failed unanswered, so asked again later. */
    void onReplayUnavailable() {
        if (state == State.REPLAYING) {
            fail();
            retryWanted = true;
        }
    }

    private long replayStartOrBufferedHead() {
        return buffered.isEmpty() ? replayNext : Math.min(replayNext, buffered.peek().seq());
    }

    private void startFromScratch(KvEventBatch b, long nowNanos) {
        if (b.seq() == 0) {
            applyLive(b);
            becomeLive();
        } else {
            startReplay(0, b, nowNanos);
        }
    }

    private void restart(KvEventBatch b, long nowNanos) {
        restarts++;
        buffered.clear();
        sink.clear();
        lastTs = Double.NEGATIVE_INFINITY;
        state = State.NEW;
        retryWanted = false;
        retryScheduled = false;
        startFromScratch(b, nowNanos);
    }

    private void becomeLive() {
        state = State.LIVE;
        retryWanted = false;
        retryScheduled = false;
        retryBackoffNanos = replayTimeoutNanos;
    }

    private void applyLive(KvEventBatch b) {
        sink.apply(b);
        expected = b.seq() + 1;
        lastTs = Math.max(lastTs, b.ts());
    }

    private void applyUnknown(KvEventBatch b) {
        sink.apply(b);
        expected = b.seq() + 1;
        lastTs = Math.max(lastTs, b.ts());
        for (KvEvent e : b.events()) {
            if (e instanceof KvEvent.AllBlocksCleared) {
                becomeLive(); // the engine emptied its cache: from here the index is exact
            }
        }
    }

    private void startReplay(long startSeq, KvEventBatch first, long nowNanos) {
        buffered.clear();
        buffered.add(first);
        if (!replayAvailable) {
            fail();
            return;
        }
        beginReplay(startSeq, nowNanos);
    }

    private void beginReplay(long startSeq, long nowNanos) {
        state = State.REPLAYING;
        replayNext = startSeq;
        replayed = 0;
        replayTruncated = false;
        replayAnswered = false;
        replayDeadlineNanos = nowNanos + replayTimeoutNanos;
        sink.requestReplay(startSeq);
    }

    /** Drops the publisher to UNKNOWN, keeping what arrives from now on. */
    private void fail() {
        replaysFailed++;
        sink.clear();
        state = State.UNKNOWN;
        KvEventBatch last = null;
        while (!buffered.isEmpty()) {
            last = buffered.poll();
            applyUnknown(last);
        }
        if (last == null) {
            expected = replayNext;
        }
    }
}
