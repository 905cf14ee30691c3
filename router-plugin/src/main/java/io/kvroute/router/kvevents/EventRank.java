package io.kvroute.router.kvevents;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventBatch;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.KvMalformedReason;
import io.kvroute.router.zmq.SubscriberLoop.Subscription;
import io.kvroute.router.zmq.SubscriberLoop;
import java.nio.ByteBuffer;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine dp rank of a subscribed worker, as the KV-event plane sees it: its sockets (a SUB on the
 * event endpoint and, while a replay runs, a DEALER on the replay endpoint, both owned by the plane's
 * {@link SubscriberLoop}), its {@link PublisherStream} (sequence, gaps, replay, restarts) and what it
 * does with the batches the stream lets through: store and remove blocks in the {@link BlockIndex}
 * under its slot. Only blocks of the full-attention KV-cache group are indexed (see
 * {@link #countsGroup}); blocks on a lower tier ({@code medium} not GPU) only when lower tiers get
 * credit ({@link KvEventsConfig#lowerTierWeight()}), into {@link LowerTierBlocks}; a BlockStored whose block size differs from the advertised one is refused
 * loudly (error log once, counter).
 *
 * <p>Threading: the events thread only, except {@link #lastMessageNanos}, which the silence gauges read.
 */
final class EventRank implements PublisherStream.Sink {

    private static final Logger LOG = LoggerFactory.getLogger(EventRank.class);

    /** What a socket of the loop is attached to: the rank, and whether it is the replay channel. */
    record Feed(EventRank rank, boolean replay) {}

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
    /** This rank's lower-tier blocks, or null when lower tiers get no credit (they are then ignored). */
    private final LowerTierBlocks lowerTier;
    private final SubscriberLoop loop;
    private final BlockIndex index;
    private final KvEventsMetrics metrics;
    Subscription sub;
    Subscription dealer;
    /** When the live socket last delivered a message (subscription time before any); read by gauges. */
    volatile long lastMessageNanos;
    long lastSubscribeNanos;
    boolean silent;
    /** Whether the live socket ever delivered a message since this rank was subscribed. */
    boolean heard;
    boolean silenceWarned;
    private boolean mismatchLogged;
    /** The full-attention KV-cache group of a hybrid model, once seen (-1 before). */
    private int attentionGroup = -1;
    /** The stream's counters already added to the meters. */
    private long countedCompleted;
    private long countedFailed;
    private long countedStale;
    private long countedRestarts;

    EventRank(String workerId, String model, List<String> eventEndpoints, List<String> replayEndpoints, String topic,
            int blockSize, KvHashMode hashMode, int rank, int slot, KvEventsConfig cfg, SubscriberLoop loop,
            BlockIndex index, BlockIndex lowerTierIndex, KvEventsMetrics metrics) {
        this.workerId = workerId;
        this.rank = rank;
        this.slot = slot;
        this.model = model;
        this.blockSize = blockSize;
        this.endpoint = eventEndpoints.get(rank);
        this.replayEndpoint = rank < replayEndpoints.size() ? replayEndpoints.get(rank) : null;
        this.topic = topic;
        this.loop = loop;
        this.index = index;
        this.metrics = metrics;
        this.stream = new PublisherStream(replayEndpoint != null, cfg.maxBufferedBatches(),
                cfg.replayTimeout().toNanos(), cfg.maxReplayBatches(), this);
        this.keying = hashMode == KvHashMode.TOKENS ? new TokenKeying(cfg.maxBlocksPerRank()) : null;
        this.lowerTier = cfg.lowerTierWeight() > 0
                ? new LowerTierBlocks(lowerTierIndex, slot, blockSize, hashMode, cfg.maxBlocksPerRank()) : null;
    }

    /** Opens the SUB (and the DEALER ahead, so a replay request never waits for a handshake) and asks for catch-up. */
    void subscribe(long nowNanos) {
        // events are not state: a dropped one is a gap, so do not drop on our side (receive high-water mark 0)
        sub = loop.subscribe(endpoint, topic, 0, new Feed(this, false));
        if (replayEndpoint != null) {
            connectReplay();
        }
        lastMessageNanos = nowNanos;
        lastSubscribeNanos = nowNanos;
        stream.onSubscribed(nowNanos); // catch up a publisher that may stay quiet
        syncCounters();
    }

    void connectReplay() {
        if (dealer != null) {
            dealer.close();
        }
        dealer = loop.dealer(replayEndpoint, 0, new Feed(this, true));
    }

    void closeSockets() {
        if (sub != null) {
            sub.close();
        }
        if (dealer != null) {
            dealer.close();
            dealer = null;
        }
    }

    @Override
    public void apply(KvEventBatch batch) {
        for (KvEvent e : batch.events()) {
            if (e instanceof KvEvent.BlockStored s) {
                boolean onGpu = KvEventsPlane.onGpu(s.medium());
                if (!onGpu && lowerTier == null) {
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
                if (!onGpu) {
                    storeLowerTier(s, key);
                    continue;
                }
                if (keying != null) {
                    storeByTokens(s, key);
                    continue;
                }
                index.store(key, slot, s.hasParent(), s.parentHash(), s.blockHashes());
                metrics.blockEvents.increment(s.blockHashes().length);
            } else if (e instanceof KvEvent.BlockRemoved r) {
                boolean onGpu = KvEventsPlane.onGpu(r.medium());
                if (!onGpu && lowerTier == null) {
                    metrics.ignoredMedium.increment(); // a lower tier dropped its copy: the GPU one may stay
                    continue;
                }
                if (!countsGroup(r.groupIdx(), null)) {
                    metrics.ignoredGroup.increment();
                    continue;
                }
                if (!onGpu) {
                    lowerTier.removed(r.blockHashes()); // the GPU copy, if any, stays
                    metrics.blockEvents.increment(r.blockHashes().length);
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
        } catch (KvEventWire.Malformed m) {
            metrics.malformed(m.reason);
        }
        metrics.tokenKeyingRefused.increment(keying.refusedBlocks() - refusedBefore);
    }

    private void storeLowerTier(KvEvent.BlockStored s, BlockIndex.Key key) {
        long refusedBefore = lowerTier.refusedBlocks();
        try {
            metrics.blockEvents.increment(lowerTier.stored(s, key, keying));
        } catch (KvEventWire.Malformed m) {
            metrics.malformed(m.reason);
        }
        metrics.tokenKeyingRefused.increment(lowerTier.refusedBlocks() - refusedBefore);
    }

    @Override
    public void clear() {
        attentionGroup = -1;
        index.clear(slot);
        if (keying != null) {
            keying.clear();
        }
        if (lowerTier != null) {
            lowerTier.clear(); // AllBlocksCleared: everything this publisher stored, on every tier
        }
    }

    @Override
    public void requestReplay(long startSeq) {
        try {
            if (dealer == null) {
                connectReplay();
            }
            dealer.send(new byte[0], ByteBuffer.allocate(Long.BYTES).putLong(startSeq).array());
            metrics.replayRequests.increment();
        } catch (RuntimeException e) {
            LOG.warn("worker {} rank {}: replay request to {} failed: {}", workerId, rank, replayEndpoint, e.toString());
            stream.onReplayUnavailable();
        }
    }

    /** Adds what the stream counted since the last call to the meters. */
    void syncCounters() {
        metrics.replaysCompleted.increment(stream.replaysCompleted - countedCompleted);
        metrics.replaysFailed.increment(stream.replaysFailed - countedFailed);
        metrics.staleBatches.increment(stream.stale - countedStale);
        metrics.restarts.increment(stream.restarts - countedRestarts);
        countedCompleted = stream.replaysCompleted;
        countedFailed = stream.replaysFailed;
        countedStale = stream.stale;
        countedRestarts = stream.restarts;
    }
}
