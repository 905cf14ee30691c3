package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.scheduler.report.KvEventPublisher;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The per-publisher silence gauges over real JeroMQ with the scheduler's {@link KvEventPublisher}
 * (it sends an empty batch every 50 ms here, as kvroute's engines do every second). The plane's
 * clock is a fake that only the test moves, so "silent for 5 s" is exact; Awaitility only waits for
 * the events thread to notice.
 */
class PublisherSilenceGaugeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final long SILENCE_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final String WORKER = "http://127.0.0.1:30001";
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong clock = new AtomicLong(TimeUnit.HOURS.toNanos(1));
    private KvEventsPlane plane;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
    }

    private Gauge gauge(String name) {
        return registry.find(name).tag("worker", WORKER).tag("rank", "0").gauge();
    }

    private double silent() {
        return gauge("kvroute.kv.events.publisher.silent").value();
    }

    private double ageSeconds() {
        return gauge("kvroute.kv.events.publisher.last.event.age").value();
    }

    private static KvEventPublisher publisher(String endpoint) {
        return KvEventPublisher.bind(endpoint, "tcp://127.0.0.1:*", 1, "kv",
                KvEventPublisher.Options.defaults().withHeartbeatNanos(50_000_000));
    }

    @Test
    void aPublisherThatGoesQuiet_isFlaggedSilentWithItsAge_recovers_andItsGaugesLeaveWithTheWorker() throws Exception {
        plane = new KvEventsPlane(KvEventsConfig.defaults().withSilence(Duration.ofNanos(SILENCE_NANOS)), clock::get,
                registry, null);
        plane.start();
        KvEventPublisher pub = publisher("tcp://127.0.0.1:*");
        String endpoint = pub.endpoints().get(0);
        plane.addWorker("w", WORKER, "m", pub.endpoints(), pub.replayEndpoints(), "kv", 4, KvHashMode.ENGINE);
        await().atMost(WAIT).until(() -> plane.snapshot().get("w") != null && plane.snapshot().get("w").live());
        assertThat(silent()).isZero();

        // twice the silence passes in steps of 1 s, and a heartbeat arrives after each: never silent
        for (int step = 0; step < 10; step++) {
            clock.addAndGet(SILENCE_NANOS / 5);
            await().atMost(WAIT).until(() -> ageSeconds() == 0);
            assertThat(silent()).isZero();
        }
        assertThat(registry.find("kvroute.kv.events.silences").counter().count()).isZero();

        pub.close(); // the publisher goes quiet
        await().atMost(WAIT).until(() -> {
            clock.addAndGet(SILENCE_NANOS + 1); // messages still in flight reset the age: move on until none come
            return silent() == 1;
        });
        assertThat(ageSeconds()).isGreaterThanOrEqualTo(5.0);
        await().atMost(WAIT).until(() -> registry.find("kvroute.kv.events.silences").counter().count() >= 1);

        // a publisher on the same endpoint again (a restarted engine): the gauge drops back to 0
        int port = URI.create(endpoint).getPort();
        try (KvEventPublisher again = publisher("tcp://127.0.0.1:" + port)) {
            await().atMost(WAIT).until(() -> silent() == 0);
            assertThat(ageSeconds()).isLessThan(5.0);
            assertThat(again.endpoints()).containsExactly(endpoint);

            plane.removeWorker("w");
            await().atMost(WAIT).until(() -> gauge("kvroute.kv.events.publisher.silent") == null);
            assertThat(gauge("kvroute.kv.events.publisher.last.event.age")).isNull();
        }
    }

    /**
     * A worker subscribed again (its descriptor changed) keeps its gauges: removing a meter and registering the same
     * name and labels while Prometheus scrapes can fail that scrape with DuplicateLabelsException
     * (micrometer-metrics/micrometer#6851), so no meter may leave and come back.
     */
    @Test
    void aWorkerSubscribedAgain_keepsItsGauges_noneRemovedAndAddedBack() throws Exception {
        plane = new KvEventsPlane(KvEventsConfig.defaults().withSilence(Duration.ofNanos(SILENCE_NANOS)), clock::get,
                registry, null);
        plane.start();
        try (KvEventPublisher pub = publisher("tcp://127.0.0.1:*")) {
            plane.addWorker("w", WORKER, "m", pub.endpoints(), pub.replayEndpoints(), "kv", 4, KvHashMode.ENGINE);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w") != null && plane.snapshot().get("w").live());
            Gauge silent = gauge("kvroute.kv.events.publisher.silent");
            Gauge age = gauge("kvroute.kv.events.publisher.last.event.age");
            java.util.List<String> removed = new java.util.concurrent.CopyOnWriteArrayList<>();
            registry.config().onMeterRemoved(m -> removed.add(m.getId().getName()));

            plane.addWorker("w", WORKER, "m2", pub.endpoints(), pub.replayEndpoints(), "kv", 4, KvHashMode.ENGINE);
            await().atMost(WAIT).until(() -> plane.snapshot().get("w") != null
                    && "m2".equals(plane.snapshot().get("w").model()) && plane.snapshot().get("w").live());
            assertThat(removed).isEmpty();
            assertThat(gauge("kvroute.kv.events.publisher.silent")).isSameAs(silent);
            assertThat(gauge("kvroute.kv.events.publisher.last.event.age")).isSameAs(age);
            assertThat(silent.value()).isZero(); // it reads the new subscription

            plane.removeWorker("w");
            await().atMost(WAIT).until(() -> gauge("kvroute.kv.events.publisher.silent") == null);
            assertThat(removed).contains("kvroute.kv.events.publisher.silent", "kvroute.kv.events.publisher.last.event.age");
        }
    }
}
