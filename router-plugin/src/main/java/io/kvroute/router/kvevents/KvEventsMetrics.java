package io.kvroute.router.kvevents;

import io.kvroute.protocol.KvMalformedReason;
import io.kvroute.router.policy.PromptExtras;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The events plane's meters ({@code kvroute_kv_events_*} in Prometheus). Counters are thread-safe;
 * the per-publisher gauges are added and removed by the events thread only, and read the
 * publisher's last-message time (a volatile field) on the scraping thread.
 */
final class KvEventsMetrics {
    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    final Counter batches;
    final Counter blockEvents;
    final Counter replayRequests;
    final Counter replaysCompleted;
    final Counter replaysFailed;
    final Counter replayTimeouts;
    final Counter silences;
    final Counter loopErrors;
    final Counter tokenKeyingRefused;
    final Counter staleBatches;
    final Counter restarts;
    final Counter ignoredMedium;
    final Counter ignoredGroup;
    final Counter refusedBigram;
    private final EnumMap<KvMalformedReason, Counter> malformed = new EnumMap<>(KvMalformedReason.class);
    /** Per {@link PromptExtras#unhashable} reason: lookups that left vLLM engine-hash workers out. */
    private final Map<String, Counter> lookupsDeclined = new HashMap<>();
    /**
     * Per publisher (an engine dp rank), the gauges of its {@code worker, rank} labels. Events thread only. A
     * worker subscribed again (its descriptor changed) keeps its gauges: {@link #removePublisher} detaches them
     * and only {@link #sweep} unregisters the ones no publisher took back, because removing a meter and
     * registering the same name and labels while Prometheus scrapes can make that scrape fail with
     * {@code DuplicateLabelsException} (micrometer-metrics/micrometer#6851).
     */
    private final Map<Object, PublisherGauges> publisherGauges = new HashMap<>();
    /** The gauges by their {@code worker, rank} labels, attached to a publisher or waiting for {@link #sweep}. */
    private final Map<List<String>, PublisherGauges> gaugesByLabels = new HashMap<>();

    /** One label set's gauges; they read whichever publisher is attached now. */
    private static final class PublisherGauges {
        final List<String> labels;
        final List<Gauge> gauges = new ArrayList<>(2);
        /** Nanoseconds since the attached publisher's last message; null while detached. */
        volatile LongSupplier ageNanos;
        volatile long silenceNanos;
        Object publisher;

        PublisherGauges(List<String> labels) {
            this.labels = labels;
        }

        double silent() {
            LongSupplier age = ageNanos;
            return age == null ? Double.NaN : age.getAsLong() >= silenceNanos ? 1 : 0;
        }

        double ageSeconds() {
            LongSupplier age = ageNanos;
            return age == null ? Double.NaN : age.getAsLong() / 1e9;
        }
    }

    KvEventsMetrics(MeterRegistry registry, Supplier<KvEventsSnapshot> snapshots, BlockIndex index,
            BlockIndex lowerTierIndex) {
        this.registry = registry;
        batches = counter("kvroute.kv.events.batches", "Event batches applied to the index");
        blockEvents = counter("kvroute.kv.events.block.events", "Block hashes stored or removed");
        replayRequests = counter("kvroute.kv.events.replay.requests", "Replay requests sent after a gap or a late join");
        replaysCompleted = register(Counter.builder("kvroute.kv.events.replays").tag("outcome", "completed")
                .description("Replays by outcome").register(registry));
        replaysFailed = register(Counter.builder("kvroute.kv.events.replays").tag("outcome", "failed")
                .description("Replays by outcome").register(registry));
        replayTimeouts = counter("kvroute.kv.events.replay.timeouts", "Replays cut off by the replay timeout");
        silences = counter("kvroute.kv.events.silences", "Times a publisher went silent for --kv-events-silence-secs");
        loopErrors = counter("kvroute.kv.events.loop.errors", "Unexpected exceptions caught by the events thread");
        tokenKeyingRefused = counter("kvroute.kv.events.token.keying.refused", "Blocks of --kv-events-hash tokens "
                + "publishers not indexed because the rank's engine-to-own hash map is at --kv-events-max-blocks-per-rank");
        staleBatches = counter("kvroute.kv.events.stale", "Live batches dropped because their seq is older than the "
                + "stream's and they do not look like a publisher restart (seq near 0, fresh timestamp)");
        restarts = counter("kvroute.kv.events.restarts", "Publisher restarts (seq started over): its blocks were cleared");
        ignoredMedium = register(Counter.builder("kvroute.kv.events.ignored").tag("reason", "medium")
                .description("Events not indexed: a tier other than GPU, or a KV-cache group that is not the "
                        + "full-attention one").register(registry));
        ignoredGroup = register(Counter.builder("kvroute.kv.events.ignored").tag("reason", "group")
                .description("Events not indexed: a tier other than GPU, or a KV-cache group that is not the "
                        + "full-attention one").register(registry));
        refusedBigram = register(Counter.builder("kvroute.kv.events.workers.refused").tag("reason", "bigram_pages")
                .description(SubscriptionRule.REFUSED_DESCRIPTION)
                .register(registry));
        for (String reason : List.of(PromptExtras.MULTIMODAL, PromptExtras.PROMPT_EMBEDS)) {
            lookupsDeclined.put(reason, register(Counter.builder("kvroute.kv.events.lookups.declined").tag("reason", reason)
                    .description("Exact-index lookups that left out vLLM workers keyed by engine hashes (--kv-events-hash "
                            + "engine): the request carries what vLLM folds into its block hashes and the router cannot "
                            + "compute, multimodal (a chat content part other than text) or prompt_embeds")
                    .register(registry)));
        }
        for (KvMalformedReason r : KvMalformedReason.values()) {
            malformed.put(r, register(Counter.builder("kvroute.kv.events.malformed").tag("reason", r.label())
                    .description("KV-event messages or events dropped").register(registry)));
        }
        register(Gauge.builder("kvroute.kv.events.workers.exact", snapshots,
                s -> s.get().workers().values().stream().filter(KvEventsSnapshot.WorkerEvents::live).count())
                .description("Workers whose every rank's events are live (exact index)").strongReference(true)
                .register(registry));
        register(Gauge.builder("kvroute.kv.events.workers.unknown", snapshots,
                s -> s.get().workers().values().stream().filter(w -> !w.live()).count())
                .description("Subscribed workers not exact now (replaying, unknown, or no events yet)")
                .strongReference(true).register(registry));
        register(Gauge.builder("kvroute.kv.events.index.blocks", index, BlockIndex::liveBlocks)
                .description("Distinct blocks in the index").strongReference(true).register(registry));
        register(Gauge.builder("kvroute.kv.events.index.bytes", index, BlockIndex::bytes)
                .description("Bytes held by the index's tables").strongReference(true).register(registry));
        register(Gauge.builder("kvroute.kv.events.lower.tier.blocks", lowerTierIndex, BlockIndex::liveBlocks)
                .description("Distinct blocks held on a lower tier (with --kv-events-lower-tier-weight above 0)")
                .strongReference(true).register(registry));
        register(Gauge.builder("kvroute.kv.events.lower.tier.bytes", lowerTierIndex, BlockIndex::bytes)
                .description("Bytes held by the lower-tier index's tables").strongReference(true).register(registry));
    }

    /**
     * Registers {@code kvroute_kv_events_publisher_silent{worker,rank}} (1 while the publisher has
     * sent nothing for {@code silenceNanos}, else 0) and
     * {@code kvroute_kv_events_publisher_last_event_age_seconds{worker,rank}}.
     *
     * @param publisher the key for {@link #removePublisher}
     * @param ageNanos nanoseconds since the publisher's last message (since subscribing before any)
     */
    void addPublisher(Object publisher, String worker, int rank, LongSupplier ageNanos, long silenceNanos) {
        removePublisher(publisher);
        List<String> labels = List.of(worker, Integer.toString(rank));
        PublisherGauges g = gaugesByLabels.get(labels);
        if (g == null) {
            g = new PublisherGauges(labels);
            gaugesByLabels.put(labels, g);
            g.gauges.add(Gauge.builder("kvroute.kv.events.publisher.silent", g, PublisherGauges::silent)
                    .tag("worker", worker).tag("rank", labels.get(1))
                    .description("1 while this KV-event publisher has sent nothing for --kv-events-silence-secs")
                    .strongReference(true).register(registry));
            g.gauges.add(Gauge.builder("kvroute.kv.events.publisher.last.event.age", g, PublisherGauges::ageSeconds)
                    .tag("worker", worker).tag("rank", labels.get(1)).baseUnit("seconds")
                    .description("Seconds since this KV-event publisher's last message (heartbeats count)")
                    .strongReference(true).register(registry));
        } else if (g.publisher != null) {
            publisherGauges.remove(g.publisher); // two publishers with one label set: the newer one reads
        }
        g.silenceNanos = silenceNanos;
        g.ageNanos = ageNanos;
        g.publisher = publisher;
        publisherGauges.put(publisher, g);
    }

    /** Detaches {@code publisher}'s gauges; {@link #sweep} unregisters them unless a publisher took them back. */
    void removePublisher(Object publisher) {
        PublisherGauges g = publisherGauges.remove(publisher);
        if (g != null) {
            g.ageNanos = null;
            g.publisher = null;
        }
    }

    /** Unregisters the gauges no publisher holds: call after a change of subscriptions is complete. */
    void sweep() {
        gaugesByLabels.values().removeIf(g -> {
            if (g.publisher != null) {
                return false;
            }
            g.gauges.forEach(registry::remove);
            return true;
        });
    }

    void malformed(KvMalformedReason reason) {
        malformed.get(reason).increment();
    }

    void lookupDeclined(String reason) {
        Counter c = lookupsDeclined.get(reason);
        if (c == null) {
            throw new IllegalStateException("no declined-lookup counter for reason " + reason);
        }
        c.increment();
    }

    private Counter counter(String name, String description) {
        return register(Counter.builder(name).description(description).register(registry));
    }

    private <M extends Meter> M register(M meter) {
        meters.add(meter);
        return meter;
    }

    /** Removes the gauges (they read the plane); counters stay. */
    void close() {
        for (Object publisher : List.copyOf(publisherGauges.keySet())) {
            removePublisher(publisher);
        }
        sweep();
        for (Meter m : meters) {
            if (m instanceof Gauge) {
                registry.remove(m);
            }
        }
    }
}
