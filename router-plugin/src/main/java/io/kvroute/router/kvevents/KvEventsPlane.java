package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The router's KV-event plane: for every engine dp rank one SUB socket on its event endpoint and,
 * while a replay runs, one DEALER on its replay endpoint, all owned by ONE thread (ZeroMQ sockets
 * are single-threaded), as the load plane does.
 *
 * <p><b>Concurrency.</b> {@link #addWorker}/{@link #removeWorker} enqueue commands the thread applies
 * within one poll timeout. The thread decodes batches ({@link KvEventDecoder}), runs each rank's
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
 * while it stays silent (a JeroMQ handshake can stall for good, see LoadPlane; a missed batch then
 * shows as a gap and is replayed). Engines send no heartbeat on this socket, so silence is normal
 * for an idle engine: a warning is logged once per subscription, and only for a rank that has sent
 * nothing since it was subscribed. An exception in one iteration is counted and the loop goes on.
 *
 * <p><b>Catch-up.</b> A rank with a replay endpoint asks for its publisher's whole buffered history
 * when subscribed ({@link PublisherStream#onSubscribed}), and a rank that has sent nothing counts as
 * holding nothing (exact), so an idle rank never hides its worker. Replay answers are read in
 * vLLM's shape (with a topic frame) and SGLang's. Only GPU blocks of the full-attention KV-cache
 * group are indexed (see {@code Rank#countsGroup}).
 */
public final class KvEventsPlane implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvEventsPlane.class);
    /** Messages read from one socket per wakeup, so one chatty rank cannot starve the others. */
    private static final int MAX_DRAIN_PER_SOCKET = 512;
    /** Frames kept per message; a longer one is malformed anyway. */
    private static final int MAX_FRAMES = 4;
    private static final long HOUSEKEEPING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long END_SEQ = -1L;

    private sealed interface Command permits Add, Remove {}

    private record Add(String workerId, String workerLabel, String model, List<String> eventEndpoints,
                       List<String> replayEndpoints, String topic, int blockSize, KvHashMode hashMode)
            implements Command {}

    private record Remove(String workerId) implements Command {}

    /** Events-thread-only state of one engine dp rank. */
    private final class Rank implements PublisherStream.Sink {
        final String workerId;
        final int rank;
        final int slot;
        final String model;
        final int blockSize;
        final String endpoint;
        final String replayEndpoint;
        final String topic;
        final PublisherStream stream;
        /** The engine-to-own hash map in {@link KvHashMode#TOKENS} mode, else null. */
        final TokenKeying keying;
        ZMQ.Socket sub;
        ZMQ.Socket dealer;
        /** When the live socket last delivered a message (subscription time before any); read by gauges. */
        volatile long lastMessageNanos;
        long lastSubscribeNanos;
        boolean silent;
        /** Whether the live socket ever delivered a message since this rank was subscribed. */
        boolean heard;
        boolean silenceWarned;
        boolean mismatchLogged;
        /** The full-attention KV-cache group of a hybrid model, once seen (-1 before). */
        int attentionGroup = -1;
        /** The stream's counters already added to the meters. */
        long countedCompleted;
        long countedFailed;
        long countedStale;
        long countedRestarts;

        Rank(Add add, int rank, int slot) {
            this.workerId = add.workerId();
            this.rank = rank;
            this.slot = slot;
            this.model = add.model();
            this.blockSize = add.blockSize();
            this.endpoint = add.eventEndpoints().get(rank);
            this.replayEndpoint = rank < add.replayEndpoints().size() ? add.replayEndpoints().get(rank) : null;
            this.topic = add.topic();
            this.stream = new PublisherStream(replayEndpoint != null, cfg.maxBufferedBatches(),
                    cfg.replayTimeout().toNanos(), cfg.maxReplayBatches(), this);
            this.keying = add.hashMode() == KvHashMode.TOKENS ? new TokenKeying(cfg.maxBlocksPerRank()) : null;
        }

        @Override
        public void apply(EventBatch batch) {
            for (KvEvent e : batch.events()) {
                if (e instanceof KvEvent.BlockStored s) {
                    if (!onGpu(s.medium())) {
                        metrics.ignoredMedium.increment();
                        continue;
                    }
                    if (!countsGroup(s.groupIdx(), s.specKind())) {
                        metrics.ignoredGroup.increment();
                        continue;
                    }
                    if (s.blockSize() != 0 && s.blockSize() != blockSize) {
                        metrics.malformed(KvMalformedReason.BLOCK_SIZE_MISMATCH);
                        if (!mismatchLogged) {
                            mismatchLogged = true;
                            LOG.error("worker {} rank {} stores blocks of {} tokens but advertised block_size {}; "
                                    + "its events are refused (a page-size mismatch would zero every match)",
                                    workerId, rank, s.blockSize(), blockSize);
                        }
                        continue;
                    }
                    BlockIndex.Key key = new BlockIndex.Key(model, s.loraId(), blockSize);
                    if (keying != null) {
                        storeByTokens(s, key);
                        continue;
                    }
                    index.store(key, slot, s.hasParent(), s.parentHash(), s.blockHashes());
                    metrics.blockEvents.increment(s.blockHashes().length);
                } else if (e instanceof KvEvent.BlockRemoved r) {
                    if (!onGpu(r.medium())) {
                        metrics.ignoredMedium.increment(); // a lower tier dropped its copy: the GPU one may stay
                        continue;
                    }
                    if (!countsGroup(r.groupIdx(), null)) {
                        metrics.ignoredGroup.increment();
                        continue;
                    }
                    if (keying != null) {
                        keying.removed(r.blockHashes(), index, slot);
                    } else {
                        index.remove(slot, r.blockHashes());
                    }
                    metrics.blockEvents.increment(r.blockHashes().length);
                } else {
                    clear();
                }
            }
            metrics.batches.increment();
        }

        /**
         * Hybrid models (vLLM's hybrid KV-cache manager) announce every block once per KV-cache group
         * ({@code group_idx}). A request's prefix is reusable only as far as its full-attention blocks
         * go, so one full-attention group counts: the first group announced with kind
         * {@code full_attention} / {@code mla_attention} (vLLM {@code vllm/v1/kv_cache_interface.py}),
         * or group 0 when the kind is not sent (vLLM before {@code kv_cache_spec_kind}). Events without
         * a group (SGLang, single-group models) always count.
         */
        private boolean countsGroup(int groupIdx, String specKind) {
            if (groupIdx < 0) {
                return true;
            }
            if (specKind != null) {
                boolean full = specKind.equals("full_attention") || specKind.equals("mla_attention");
                if (!full) {
                    return false;
                }
                if (attentionGroup < 0) {
                    attentionGroup = groupIdx;
                }
            }
            return groupIdx == (attentionGroup < 0 ? 0 : attentionGroup);
        }

        private void storeByTokens(KvEvent.BlockStored s, BlockIndex.Key key) {
            long refusedBefore = keying.refusedBlocks();
            try {
                metrics.blockEvents.increment(keying.stored(s, blockSize, index, key, slot));
            } catch (KvEventDecoder.Malformed m) {
                metrics.malformed(m.reason);
            }
            metrics.tokenKeyingRefused.increment(keying.refusedBlocks() - refusedBefore);
        }

        @Override
        public void clear() {
            attentionGroup = -1;
            index.clear(slot);
            if (keying != null) {
                keying.clear();
            }
        }

        @Override
        public void requestReplay(long startSeq) {
            try {
                if (dealer == null) {
                    connectReplay(this);
                }
                dealer.sendMore(new byte[0]);
                dealer.send(ByteBuffer.allocate(Long.BYTES).putLong(startSeq).array());
                metrics.replayRequests.increment();
            } catch (RuntimeException e) {
                LOG.warn("worker {} rank {}: replay request to {} failed: {}", workerId, rank, replayEndpoint, e.toString());
                stream.onReplayUnavailable();
            }
        }
    }

    private final KvEventsConfig cfg;
    private final LongSupplier nanoClock;
    private final ZContext sharedContext;
    private final BlockIndex index;
    private final KvEventsMetrics metrics;
    private final Queue<Command> commands = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile KvEventsSnapshot snapshot = KvEventsSnapshot.EMPTY;
    private volatile boolean running = true;

    // events thread only
    private ZContext ctx;
    private final LinkedHashMap<String, List<Rank>> workers = new LinkedHashMap<>();
    private final Map<String, Add> adds = new HashMap<>();
    private final BitSet usedSlots = new BitSet();
    private Rank[] polled = new Rank[0];
    private final byte[][] frames = new byte[MAX_FRAMES][];

    /**
     * @param sharedContext a ZeroMQ context shared with in-process publishers ({@code inproc://}), or
     *        null for the plane to own one
     */
    public KvEventsPlane(KvEventsConfig cfg, LongSupplier nanoClock, MeterRegistry registry, ZContext sharedContext) {
        this.cfg = requireNonNull(cfg, "cfg");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock");
        this.sharedContext = sharedContext;
        this.index = new BlockIndex(cfg.maxBlocksPerRank());
        this.metrics = new KvEventsMetrics(requireNonNull(registry, "registry"), this::snapshot, index);
        this.thread = new Thread(this::run, "kvroute-kv-events");
        thread.setDaemon(true);
    }

    public void start() {
        thread.start();
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
        requireNonNull(workerId, "workerId");
        requireNonNull(workerLabel, "workerLabel");
        requireNonNull(hashMode, "hashMode");
        if (eventEndpoints.isEmpty()) {
            throw new IllegalArgumentException("worker " + workerId + " advertises no KV-event endpoint");
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("worker " + workerId + " advertises no block_size");
        }
        commands.add(new Add(workerId, workerLabel, model == null ? "" : model, List.copyOf(eventEndpoints),
                List.copyOf(replayEndpoints), topic == null ? "" : topic, blockSize, hashMode));
    }

    /**
     * Counts a worker refused for the exact index because its engine keys pages by token bigrams
     * (EAGLE-family speculative decoding); the caller logs and does not subscribe it.
     */
    public void refuseBigramWorker() {
        metrics.refusedBigram.increment();
    }

    /** Unsubscribes a worker and removes its blocks from the index. */
    public void removeWorker(String workerId) {
        commands.add(new Remove(requireNonNull(workerId, "workerId")));
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

    /** One more than the highest slot in use: the length of a {@link BlockIndex#match} answer. */
    int slotCount() {
        return slotCount;
    }

    private volatile int slotCount;
    /** Silence warnings logged, since start (read by tests). */
    volatile long silenceWarnings;

    @Override
    public void close() {
        running = false;
        if (thread.isAlive()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        ctx = sharedContext != null ? sharedContext : new ZContext(1);
        ZMQ.Poller poller = null;
        long lastHousekeeping = System.nanoTime();
        try {
            long pollMillis = cfg.pollTimeout().toMillis();
            while (running) {
                try {
                    boolean rebuild = applyCommands();
                    long now = System.nanoTime();
                    if (now - lastHousekeeping >= HOUSEKEEPING_NANOS) {
                        lastHousekeeping = now;
                        long clockNanos = nanoClock.getAsLong();
                        rebuild |= housekeeping(clockNanos);
                        index.maintain(clockNanos);
                    }
                    if (rebuild) {
                        if (poller != null) {
                            poller.close();
                        }
                        poller = register();
                        publish();
                    }
                    boolean changed = drainReplays();
                    if (polled.length == 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pollMillis));
                    } else if (poller.poll(anyReplaying() ? 2 : pollMillis) > 0) {
                        for (int i = 0; i < polled.length; i++) {
                            if (poller.pollin(i)) {
                                changed |= drainLive(polled[i]);
                            }
                        }
                    }
                    if (changed) {
                        publish();
                    }
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    metrics.loopErrors.increment();
                    LOG.debug("KV-event loop error", e);
                }
            }
        } finally {
            if (poller != null) {
                poller.close();
            }
            for (List<Rank> ranks : workers.values()) {
                ranks.forEach(KvEventsPlane::closeSockets);
            }
            workers.clear();
            metrics.close();
            if (sharedContext == null) {
                ctx.close();
            }
        }
    }

    private boolean applyCommands() {
        boolean changed = false;
        Command c;
        while ((c = commands.poll()) != null) {
            if (c instanceof Add add) {
                if (add.equals(adds.get(add.workerId()))) {
                    continue;
                }
                drop(add.workerId());
                List<Rank> ranks = new ArrayList<>();
                for (int r = 0; r < add.eventEndpoints().size(); r++) {
                    int slot = usedSlots.nextClearBit(0);
                    usedSlots.set(slot);
                    Rank rank = new Rank(add, r, slot);
                    rank.sub = subscribe(rank);
                    if (rank.replayEndpoint != null) {
                        connectReplay(rank); // connected ahead, so a request never waits for a handshake
                    }
                    rank.lastMessageNanos = nanoClock.getAsLong();
                    rank.lastSubscribeNanos = rank.lastMessageNanos;
                    rank.stream.onSubscribed(rank.lastMessageNanos); // catch up a publisher that may stay quiet
                    syncCounters(rank);
                    metrics.addPublisher(rank, add.workerLabel(), r, () -> nanoClock.getAsLong() - rank.lastMessageNanos,
                            cfg.silence().toNanos());
                    ranks.add(rank);
                }
                workers.put(add.workerId(), ranks);
                adds.put(add.workerId(), add);
                slotCount = usedSlots.length();
                changed = true;
            } else if (c instanceof Remove rm) {
                changed |= drop(rm.workerId());
            }
        }
        return changed;
    }

    private boolean drop(String workerId) {
        List<Rank> ranks = workers.remove(workerId);
        adds.remove(workerId);
        if (ranks == null) {
            return false;
        }
        for (Rank r : ranks) {
            metrics.removePublisher(r);
            closeSockets(r);
            index.clear(r.slot);
            usedSlots.clear(r.slot);
        }
        return true;
    }

    private ZMQ.Socket subscribe(Rank r) {
        ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
        sub.setRcvHWM(0); // events are not state: a dropped one is a gap, so do not drop on our side
        sub.setLinger(0);
        sub.subscribe(r.topic.getBytes(StandardCharsets.UTF_8));
        sub.connect(r.endpoint);
        return sub;
    }

    private void connectReplay(Rank r) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.setRcvHWM(0);
        dealer.connect(r.replayEndpoint);
        r.dealer = dealer;
    }

    private static void closeSockets(Rank r) {
        if (r.sub != null) {
            r.sub.close();
        }
        if (r.dealer != null) {
            r.dealer.close();
            r.dealer = null;
        }
    }

    private ZMQ.Poller register() {
        List<Rank> all = new ArrayList<>();
        workers.values().forEach(all::addAll);
        ZMQ.Poller poller = ctx.createPoller(Math.max(1, all.size()));
        for (Rank r : all) {
            poller.register(r.sub, ZMQ.Poller.POLLIN);
        }
        polled = all.toArray(new Rank[0]);
        return poller;
    }

    /** Replay timeouts and silence; true when a socket was replaced (the poller must be rebuilt). */
    private boolean housekeeping(long nowNanos) {
        boolean rebuild = false;
        long silenceNanos = cfg.silence().toNanos();
        for (Rank r : polled) {
            PublisherStream.State before = r.stream.state();
            r.stream.onTick(nowNanos);
            syncCounters(r);
            if (before != r.stream.state()) {
                metrics.replayTimeouts.increment();
                if (r.dealer != null) {
                    r.dealer.close(); // a JeroMQ handshake can stall for good (see LoadPlane): start afresh
                    connectReplay(r);
                }
                publish();
            }
            if (nowNanos - r.lastMessageNanos >= silenceNanos) {
                if (!r.silent) {
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
                        LOG.debug("worker {} rank {} quiet for {} s; resubscribing", r.workerId, r.rank,
                                cfg.silence().toSeconds());
                    }
                }
                if (nowNanos - r.lastSubscribeNanos >= silenceNanos) {
                    r.sub.close();
                    r.sub = subscribe(r);
                    r.lastSubscribeNanos = nowNanos;
                    rebuild = true;
                }
            }
        }
        return rebuild;
    }

    private boolean anyReplaying() {
        for (Rank r : polled) {
            if (r.stream.state() == PublisherStream.State.REPLAYING) {
                return true;
            }
        }
        return false;
    }

    private boolean drainLive(Rank r) {
        boolean changed = false;
        for (int n = 0; n < MAX_DRAIN_PER_SOCKET; n++) {
            int count = receive(r.sub);
            if (count < 0) {
                break;
            }
            r.lastMessageNanos = nanoClock.getAsLong();
            r.silent = false;
            r.heard = true;
            try {
                EventBatch b = KvEventDecoder.decode(frames, count, r.keying != null);
                PublisherStream.State before = r.stream.state();
                r.stream.onLive(b, nanoClock.getAsLong());
                syncCounters(r);
                changed |= before != r.stream.state();
            } catch (KvEventDecoder.Malformed m) {
                metrics.malformed(m.reason);
            } finally {
                Arrays.fill(frames, null);
            }
        }
        return changed;
    }

    private boolean drainReplays() {
        boolean changed = false;
        for (Rank r : polled) {
            if (r.dealer == null) {
                continue;
            }
            for (int n = 0; n < MAX_DRAIN_PER_SOCKET; n++) {
                int count = receive(r.dealer);
                if (count < 0) {
                    break;
                }
                PublisherStream.State before = r.stream.state();
                // through a DEALER (ROUTER's delimiter kept): [b"", topic, seq, payload] (vLLM since its topic
                // frame, vllm/distributed/kv_events.py) or [b"", seq, payload] (SGLang, older vLLM); end markers
                // [b"", b"", END, b""] and [b"", END, b""]; a peer without the delimiter sends [seq, payload]
                int at;
                if (count == 4 && frames[0].length == 0) {
                    at = 2;
                } else if (count == 3 && frames[0].length == 0) {
                    at = 1;
                } else {
                    at = count == 2 ? 0 : -1;
                }
                if (at < 0 || frames[at].length != Long.BYTES) {
                    metrics.malformed(KvMalformedReason.BAD_FRAMES);
                    r.stream.onReplay(Long.MAX_VALUE, null);
                } else {
                    long seq = ByteBuffer.wrap(frames[at]).getLong();
                    if (seq == END_SEQ) {
                        r.stream.onReplayEnd();
                    } else {
                        EventBatch b;
                        try {
                            b = KvEventDecoder.decodePayload(seq, frames[at + 1], r.keying != null);
                        } catch (KvEventDecoder.Malformed m) {
                            metrics.malformed(m.reason);
                            b = null;
                        }
                        r.stream.onReplay(seq, b);
                    }
                }
                Arrays.fill(frames, null);
                syncCounters(r);
                PublisherStream.State after = r.stream.state();
                changed |= before != after;
            }
        }
        return changed;
    }

    /** Adds what the rank's stream counted since the last call to the meters. */
    private void syncCounters(Rank r) {
        PublisherStream st = r.stream;
        metrics.replaysCompleted.increment(st.replaysCompleted - r.countedCompleted);
        metrics.replaysFailed.increment(st.replaysFailed - r.countedFailed);
        metrics.staleBatches.increment(st.stale - r.countedStale);
        metrics.restarts.increment(st.restarts - r.countedRestarts);
        r.countedCompleted = st.replaysCompleted;
        r.countedFailed = st.replaysFailed;
        r.countedStale = st.stale;
        r.countedRestarts = st.restarts;
    }

    /** Only GPU-resident blocks are hits; events without a medium are the engine's own (GPU) cache. */
    static boolean onGpu(String medium) {
        return medium == null || medium.equalsIgnoreCase("GPU");
    }

    /** Reads one multipart message into {@link #frames}; its frame count, or -1 when none is waiting. */
    private int receive(ZMQ.Socket socket) {
        byte[] first = socket.recv(ZMQ.DONTWAIT);
        if (first == null) {
            return -1;
        }
        frames[0] = first;
        int count = 1;
        while (socket.hasReceiveMore()) {
            byte[] f = socket.recv(0);
            if (count < MAX_FRAMES) {
                frames[count] = f;
            }
            count++;
        }
        return count;
    }

    private void publish() {
        Map<String, KvEventsSnapshot.WorkerEvents> out = new HashMap<>();
        for (Map.Entry<String, List<Rank>> e : workers.entrySet()) {
            List<Rank> ranks = e.getValue();
            int[] slots = new int[ranks.size()];
            List<String> states = new ArrayList<>(ranks.size());
            boolean live = true;
            for (int i = 0; i < slots.length; i++) {
                Rank r = ranks.get(i);
                slots[i] = r.slot;
                states.add(r.stream.state().name().toLowerCase(Locale.ROOT));
                // NEW: nothing received and nothing to catch up from, so it holds nothing we could miss
                live &= r.stream.state() == PublisherStream.State.LIVE || r.stream.state() == PublisherStream.State.NEW;
            }
            Rank first = ranks.get(0);
            out.put(e.getKey(), new KvEventsSnapshot.WorkerEvents(first.model, first.blockSize, slots,
                    List.copyOf(states), live, first.keying != null ? KvHashMode.TOKENS : KvHashMode.ENGINE));
        }
        snapshot = new KvEventsSnapshot(snapshot.version() + 1, Map.copyOf(out));
    }
}
