package io.kvroute.router.kvevents;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.function.Supplier;

/** The events plane's meters ({@code kvroute_kv_events_*} in Prometheus). Counters are thread-safe. */
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
    private final EnumMap<KvMalformedReason, Counter> malformed = new EnumMap<>(KvMalformedReason.class);

    KvEventsMetrics(MeterRegistry registry, Supplier<KvEventsSnapshot> snapshots, BlockIndex index) {
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
    }

    void malformed(KvMalformedReason reason) {
        malformed.get(reason).increment();
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
        for (Meter m : meters) {
            if (m instanceof Gauge) {
                registry.remove(m);
            }
        }
    }
}
