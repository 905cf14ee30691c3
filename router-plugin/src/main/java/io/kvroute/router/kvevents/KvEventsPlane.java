package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.protocol.KvEventBatch;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.KvMalformedReason;
import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.zmq.SubscriberLoop.Subscription;
import io.kvroute.router.zmq.SubscriberLoop;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * The router's KV-event plane: for every engine dp rank ({@link EventRank}) one SUB socket on its event
 * endpoint and, while a replay runs, one DEALER on its replay endpoint, all owned by ONE thread, a
 * {@link SubscriberLoop} shared in design with the load plane (ZeroMQ sockets are single-threaded).
 *
 * <p><b>Concurrency.</b> {@link #addWorker}/{@link #removeWorker} enqueue tasks the thread runs
 * within one poll timeout. The thread decodes batches ({@link KvEventWire}), runs each rank's
 * {@link PublisherStream} (sequence, gaps, replay, restarts) and applies events to the
 * {@link BlockIndex}, its only writer; requests read the index lock-free. Which workers are exact
 * (every rank LIVE) is published as an immutable {@link KvEventsSnapshot} through a volatile field
 * after each change. No lock anywhere.
 *
 * <p><b>Keying.</b> A worker's blocks enter the index under the engine's own hashes
 * ({@link KvHashMode#ENGINE}, SGLang's reproducible page hash) or, for engines whose hashes the
 * router cannot reproduce, under the router's own hash of each event's {@code token_ids}
 * ({@link KvHashMode#TOKENS}: the rank's {@link TokenKeying} keeps the engine-to-own map; events
 * are then decoded with their tokens). {@link ExactCacheIndex} hashes a request the worker's way.
 *
 * <p><b>Faults.</b> Malformed frames are dropped and counted by reason; a BlockStored whose block
 * size differs from the advertised one is refused loudly (error log once per rank, counter). A rank
 * silent for {@link KvEventsConfig#silence()} (on the injected clock) reads 1 on its
 * {@code kvroute_kv_events_publisher_silent{worker,rank}} gauge (its
 * {@code _last_event_age_seconds} gauge says for how long), counts
 * {@code kvroute_kv_events_silences_total} once and gets a fresh SUB socket every silence period
 * while it stays silent (a JeroMQ handshake can stall for good, see SubscriberLoop; a missed batch then
 * shows as a gap and is replayed). Engines send no heartbeat on this socket, so silence is normal
 * for an idle engine: a warning is logged once per subscription, and only for a rank that has sent
 * nothing since it was subscribed. An exception in one iteration is counted and the loop goes on.
 *
 * <p><b>Catch-up.</b> A rank with a replay endpoint asks for its publisher's whole buffered history
 * when subscribed ({@link PublisherStream#onSubscribed}), and a rank that has sent nothing counts as
 * holding nothing (exact), so an idle rank never hides its worker. Replay answers are read in
 * vLLM's shape (with a topic frame) and SGLang's. Only blocks of the full-attention KV-cache group
 * are indexed, GPU blocks in {@link #index()} and, with a lower-tier weight, the others in
 * {@link #lowerTierIndex()} (see {@link EventRank}). Every time of the plane (silence, replay timeouts, index
 * revalidation) is read from the injected clock.
 */
public final class KvEventsPlane implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvEventsPlane.class);
    /** Messages read from one socket per wakeup, so one chatty rank cannot starve the others. */
    private static final int MAX_DRAIN_PER_SOCKET = 512;
    /** Frames kept per message; a longer one is malformed anyway. */
    private static final int MAX_FRAMES = 4;

    private record Add(String workerId, String workerLabel, String model, List<String> eventEndpoints,
                       List<String> replayEndpoints, String topic, int blockSize, KvHashMode hashMode,
                       VllmHashSpec vllmHash) {}

    private final KvEventsConfig cfg;
    private final LongSupplier nanoClock;
    private final BlockIndex index;
    /** Blocks held on a lower tier, same slots and keys as {@link #index}; empty while the weight is 0. */
    private final BlockIndex lowerTierIndex;
    private final KvEventsMetrics metrics;
    private final SubscriberLoop loop;
    private volatile KvEventsSnapshot snapshot = KvEventsSnapshot.EMPTY;
    private volatile int slotCount;
    /** Silence warnings logged, since start (read by tests). */
    volatile long silenceWarnings;

    // events thread only
    private final LinkedHashMap<String, List<EventRank>> workers = new LinkedHashMap<>();
    private final Map<String, Add> adds = new HashMap<>();
    private final BitSet usedSlots = new BitSet();
    /** Some rank's state or the membership changed since the last publish. */
    private boolean changed;

    /**
     * @param nanoClock the router's clock: silence, replay timeouts and index revalidation
     * @param sharedContext a ZeroMQ context shared with in-process publishers ({@code inproc://}), or
     *        null for the plane to own one
     */
    public KvEventsPlane(KvEventsConfig cfg, LongSupplier nanoClock, MeterRegistry registry, ZContext sharedContext) {
        this.cfg = requireNonNull(cfg, "cfg");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        this.index = new BlockIndex(cfg.maxBlocksPerRank());
        this.lowerTierIndex = new BlockIndex(cfg.maxBlocksPerRank());
        this.metrics = new KvEventsMetrics(requireNonNull(registry, "registry"), this::snapshot, index, lowerTierIndex);
        this.loop = new SubscriberLoop(new SubscriberLoop.Settings("kvroute-kv-events", MAX_FRAMES,
                MAX_DRAIN_PER_SOCKET, 0), nanoClock, sharedContext);
    }

    public void start() {
        loop.start(new Handler());
    }

    /**
     * Subscribes to a worker whose rank r publishes on {@code eventEndpoints.get(r)} (and answers
     * replays on {@code replayEndpoints.get(r)}, when given). Re-adding with the same facts is a
     * no-op; with other facts the worker's blocks are forgotten and it is subscribed anew.
     */
    public void addWorker(String workerId, String model, List<String> eventEndpoints, List<String> replayEndpoints,
            String topic, int blockSize) {
        addWorker(workerId, workerId, model, eventEndpoints, replayEndpoints, topic, blockSize, cfg.hashMode());
    }

    /**
     * As {@link #addWorker(String, String, List, List, String, int)}, with the {@code worker} label of
     * its per-rank gauges (the worker's URL) and how its blocks are keyed.
     */
    public void addWorker(String workerId, String workerLabel, String model, List<String> eventEndpoints,
            List<String> replayEndpoints, String topic, int blockSize, KvHashMode hashMode) {
        addWorker(workerId, workerLabel, model, eventEndpoints, replayEndpoints, topic, blockSize, hashMode, null);
    }

    /**
     * As above, for a vLLM worker keyed by its engine hashes when {@code vllmHash} (a reproducible
     * algorithm and the engines' {@code PYTHONHASHSEED}) is not null: queries then follow vLLM's chain.
     */
    public void addWorker(String workerId, String workerLabel, String model, List<String> eventEndpoints,
            List<String> replayEndpoints, String topic, int blockSize, KvHashMode hashMode, VllmHashSpec vllmHash) {
        requireNonNull(workerId, "workerId");
        requireNonNull(workerLabel, "workerLabel");
        requireNonNull(hashMode, "hashMode");
        if (eventEndpoints.isEmpty()) {
            throw new IllegalArgumentException("worker " + workerId + " advertises no KV-event endpoint");
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("worker " + workerId + " advertises no block_size");
        }
        Add add = new Add(workerId, workerLabel, model == null ? "" : model, List.copyOf(eventEndpoints),
                List.copyOf(replayEndpoints), topic == null ? "" : topic, blockSize, hashMode,
                hashMode == KvHashMode.ENGINE ? vllmHash : null);
        loop.execute(() -> subscribe(add));
    }

    /**
     * Counts a worker refused for the exact index because its engine keys pages by token bigrams
     * (EAGLE-family speculative decoding); the caller logs and does not subscribe it.
     */
    public void refuseBigramWorker() {
        metrics.refusedBigram.increment();
    }

    /**
     * Counts an exact lookup that left out workers keyed by vLLM's own hashes because the request carries
     * what vLLM folds into them and the router cannot compute ({@link io.kvroute.router.policy.PromptExtras#unhashable}).
     * Any thread.
     */
    void lookupDeclined(String reason) {
        metrics.lookupDeclined(reason);
    }

    /** Unsubscribes a worker and removes its blocks from the index. */
    public void removeWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        loop.execute(() -> {
            changed |= drop(workerId);
            metrics.sweep();
        });
    }

    public KvEventsConfig config() {
        return cfg;
    }

    public KvEventsSnapshot snapshot() {
        return snapshot;
    }

    public BlockIndex index() {
        return index;
    }

    /** Blocks publishers hold on a lower tier (CPU, disk...); written only with a lower-tier weight above 0. */
    BlockIndex lowerTierIndex() {
        return lowerTierIndex;
    }

    /** One more than the highest slot in use: the length of a {@link BlockIndex#match} answer. */
    int slotCount() {
        return slotCount;
    }

    @Override
    public void close() {
        loop.close();
    }

    /**
     * GPU-resident blocks are full hits; events without a medium are the engine's own (GPU) cache.
     * Other media are lower tiers, credited at {@link KvEventsConfig#lowerTierWeight()} (0 by default).
     */
    static boolean onGpu(String medium) {
        return medium == null || medium.equalsIgnoreCase("GPU");
    }

    /** The plane's side of the loop: housekeeping, live and replay messages, publishing. */
    private final class Handler implements SubscriberLoop.Handler {
        @Override
        public void onIteration(long nowNanos) {
            housekeeping(nowNanos);
            index.maintain(nowNanos); // throttled inside
            lowerTierIndex.maintain(nowNanos);
            publishIfChanged();
        }

        @Override
        public void onMessage(Subscription from, byte[][] frames, int count) {
            EventRank.Feed feed = (EventRank.Feed) from.owner();
            EventRank r = feed.rank();
            PublisherStream.State before = r.stream.state();
            if (feed.replay()) {
                onReplayMessage(r, frames, count);
            } else {
                r.lastMessageNanos = nanoClock.getAsLong();
                r.silent = false;
                r.heard = true;
                try {
                    r.stream.onLive(KvEventWire.decode(frames, count, r.keying != null), nanoClock.getAsLong());
                } catch (KvEventWire.Malformed m) {
                    metrics.malformed(m.reason);
                }
            }
            r.syncCounters();
            changed |= before != r.stream.state();
        }

        @Override
        public void afterMessages() {
            publishIfChanged();
        }

        @Override
        public long pollTimeoutMillis() {
            for (List<EventRank> ranks : workers.values()) {
                for (EventRank r : ranks) {
                    if (r.stream.state() == PublisherStream.State.REPLAYING) {
                        return 2; // replay timeouts are checked between polls
                    }
                }
            }
            return cfg.pollTimeout().toMillis();
        }

        @Override
        public void onLoopError(RuntimeException e) {
            metrics.loopErrors.increment();
            LOG.debug("KV-event loop error", e);
        }

        @Override
        public void onStopped() {
            workers.clear();
            metrics.close();
        }
    }

    private void subscribe(Add add) {
        if (add.equals(adds.get(add.workerId()))) {
            return;
        }
        drop(add.workerId());
        List<EventRank> ranks = new ArrayList<>();
        long now = nanoClock.getAsLong();
        for (int r = 0; r < add.eventEndpoints().size(); r++) {
            int slot = usedSlots.nextClearBit(0);
            usedSlots.set(slot);
            EventRank rank = new EventRank(add.workerId(), add.model(), add.eventEndpoints(), add.replayEndpoints(),
                    add.topic(), add.blockSize(), add.hashMode(), r, slot, cfg, loop, index, lowerTierIndex, metrics);
            rank.subscribe(now);
            metrics.addPublisher(rank, add.workerLabel(), r, () -> nanoClock.getAsLong() - rank.lastMessageNanos,
                    cfg.silence().toNanos());
            ranks.add(rank);
        }
        workers.put(add.workerId(), ranks);
        adds.put(add.workerId(), add);
        metrics.sweep(); // after the drop above: a rank subscribed again kept its gauges
        slotCount = usedSlots.length();
        changed = true;
    }

    private boolean drop(String workerId) {
        List<EventRank> ranks = workers.remove(workerId);
        adds.remove(workerId);
        if (ranks == null) {
            return false;
        }
        for (EventRank r : ranks) {
            metrics.removePublisher(r);
            r.closeSockets();
            index.clear(r.slot);
            lowerTierIndex.clear(r.slot);
            usedSlots.clear(r.slot);
        }
        return true;
    }

    /** Replay timeouts and silence, on the injected clock. */
    private void housekeeping(long nowNanos) {
        long silenceNanos = cfg.silence().toNanos();
        for (List<EventRank> ranks : workers.values()) {
            for (EventRank r : ranks) {
                PublisherStream.State before = r.stream.state();
                r.stream.onTick(nowNanos);
                r.syncCounters();
                PublisherStream.State after = r.stream.state();
                if (before == PublisherStream.State.REPLAYING && after != PublisherStream.State.REPLAYING) {
                    metrics.replayTimeouts.increment();
                    if (r.dealer != null) {
                        r.connectReplay(); // the answers may come on a stuck connection: start afresh
                    }
                }
                if (before != after) {
                    changed = true; // a timed-out replay, or the retry of an unanswered one
                }
                if (nowNanos - r.lastMessageNanos >= silenceNanos) {
                    noteSilent(r);
                    if (nowNanos - r.lastSubscribeNanos >= silenceNanos) {
                        r.sub.reopen();
                        r.lastSubscribeNanos = nowNanos;
                    }
                }
            }
        }
    }

    private void noteSilent(EventRank r) {
        if (r.silent) {
            return;
        }
        r.silent = true;
        metrics.silences.increment();
        if (!r.heard && !r.silenceWarned) {
            // once per subscription: engines send no heartbeat here, so an idle engine is quiet too
            r.silenceWarned = true;
            silenceWarnings++;
            LOG.warn("worker {} rank {} has sent no KV events in the {} s since it was subscribed "
                    + "(endpoint {}). Fine for an idle engine; if it serves traffic, check the endpoint, "
                    + "the topic and the engine's KV-event settings", r.workerId, r.rank,
                    cfg.silence().toSeconds(), r.endpoint);
        } else {
            LOG.debug("worker {} rank {} quiet for {} s; resubscribing", r.workerId, r.rank, cfg.silence().toSeconds());
        }
    }

    /** A replay answer or end marker, through a DEALER, in any layout {@link KvEventWire#replaySeqIndex} reads. */
    private void onReplayMessage(EventRank r, byte[][] frames, int count) {
        int at = KvEventWire.replaySeqIndex(frames, count);
        if (at < 0) {
            metrics.malformed(KvMalformedReason.BAD_FRAMES);
            r.stream.onReplay(Long.MAX_VALUE, null);
            return;
        }
        long seq = ByteBuffer.wrap(frames[at]).getLong();
        if (seq == KvEventWire.END_SEQ) {
            r.stream.onReplayEnd();
            return;
        }
        KvEventBatch b;
        try {
            b = KvEventWire.decodePayload(seq, frames[at + 1], r.keying != null);
        } catch (KvEventWire.Malformed m) {
            metrics.malformed(m.reason);
            b = null;
        }
        r.stream.onReplay(seq, b);
    }

    private void publishIfChanged() {
        if (!changed) {
            return;
        }
        changed = false;
        Map<String, KvEventsSnapshot.WorkerEvents> out = new HashMap<>();
        for (Map.Entry<String, List<EventRank>> e : workers.entrySet()) {
            List<EventRank> ranks = e.getValue();
            int[] slots = new int[ranks.size()];
            List<String> states = new ArrayList<>(ranks.size());
            boolean live = true;
            for (int i = 0; i < slots.length; i++) {
                EventRank r = ranks.get(i);
                slots[i] = r.slot;
                states.add(r.stream.state().name().toLowerCase(Locale.ROOT));
                // NEW: nothing received and nothing to catch up from, so it holds nothing we could miss
                live &= r.stream.state() == PublisherStream.State.LIVE || r.stream.state() == PublisherStream.State.NEW;
            }
            EventRank first = ranks.get(0);
            out.put(e.getKey(), new KvEventsSnapshot.WorkerEvents(first.model, first.blockSize, slots,
                    List.copyOf(states), live, first.keying != null ? KvHashMode.TOKENS : KvHashMode.ENGINE,
                    adds.get(e.getKey()).vllmHash()));
        }
        snapshot = new KvEventsSnapshot(snapshot.version() + 1, Map.copyOf(out));
    }
}
