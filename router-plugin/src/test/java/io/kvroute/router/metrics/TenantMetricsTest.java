package io.kvroute.router.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.tenant.FakeFleet;
import io.kvroute.router.tenant.PriorityClass;
import io.kvroute.router.tenant.QosGate;
import io.kvroute.router.tenant.QosTicket;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tenant.TenantSpec;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Tenant labels stay bounded however many tenants there are; the gate's events and counts as series. */
class TenantMetricsTest {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Test
    void tenantsPastTheLabelLimit_areLabelledOther() {
        TenantMetrics metrics = new TenantMetrics(registry, 3);
        for (int i = 0; i < 10_000; i++) {
            metrics.shed("tenant-" + i, PriorityClass.DEFAULT, "queue_full");
        }
        String scrape = registry.scrape();
        long series = scrape.lines().filter(l -> l.startsWith("kvroute_qos_shed_total{")).count();
        assertThat(series).isEqualTo(4);
        assertThat(scrape).contains("kvroute_qos_shed_total{class=\"default\",reason=\"queue_full\",tenant=\"other\"} 9997.0");
        assertThat(metrics.label("tenant-1")).isEqualTo("tenant-1");
        assertThat(metrics.label("tenant-9")).isEqualTo(TenantMetrics.OTHER);
        assertThat(metrics.label("other")).as("a tenant named other is counted with the rest").isEqualTo(TenantMetrics.OTHER);
    }

    /**
     * The label bound is exact under concurrent first sightings. Eight threads released together by a latch each
     * label the same 2,000 new tenants, each from its own offset, so every thread is seeing tenants first while
     * the others are. The racy interleaving this guards against: with a size check before the put, threads
     * T1..Tn each read {@code size() == limit - 1} for tenants X1..Xn before any of them puts, and all n tenants
     * get their own label. Each round, exactly {@code limit} tenants are ever given their own name (by any thread),
     * the map agrees afterwards, and the registry has exactly that many tenant series. The window is a few
     * nanoseconds once per round, so on a two-core box this never caught the old code (0 of 120 rounds); the next
     * test forces the interleaving through the hook instead.
     */
    @Test
    void concurrentFirstSightings_labelExactlyTheLimit() throws Exception {
        int limit = 16;
        int threads = 8;
        int tenants = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 20; round++) {
                PrometheusMeterRegistry roundRegistry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
                TenantMetrics metrics = new TenantMetrics(roundRegistry, limit);
                CountDownLatch start = new CountDownLatch(1);
                Set<String> named = ConcurrentHashMap.newKeySet();
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int offset = t * tenants / threads;
                    done.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < tenants; i++) {
                            String tenant = "tenant-" + (offset + i) % tenants;
                            String label = metrics.label(tenant);
                            if (!label.equals(TenantMetrics.OTHER)) {
                                named.add(label);
                            }
                            metrics.shed(tenant, PriorityClass.DEFAULT, "queue_full");
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get(30, TimeUnit.SECONDS);
                }
                assertThat(named).as("round " + round + ": tenants given their own label").hasSize(limit);
                long labelledAfter = IntStream.range(0, tenants)
                        .filter(i -> !metrics.label("tenant-" + i).equals(TenantMetrics.OTHER)).count();
                assertThat(labelledAfter).as("round " + round + ": labelled when asked again").isEqualTo(limit);
                long series = roundRegistry.scrape().lines().filter(l -> l.startsWith("kvroute_qos_shed_total{")
                        && l.contains("reason=\"queue_full\"") && !l.contains("tenant=\"other\"")).count();
                assertThat(series).as("round " + round + ": tenant series").isEqualTo(limit);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The same interleaving forced through the hook: eight new tenants, one per thread, limit four. Each thread has
     * seen that slots are left and waits in the hook until all eight have; then they all go on at once. Exactly four
     * get their own label. With a size check before the put, all eight passed the check and all eight were labelled.
     */
    @Test
    void newTenantsThatAllSawRoomAtOnce_stillLabelOnlyTheLimit() throws Exception {
        int limit = 4;
        int threads = 8;
        TenantMetrics metrics = new TenantMetrics(registry, limit);
        CountDownLatch allSawRoom = new CountDownLatch(threads);
        metrics.newTenantHook = () -> {
            allSawRoom.countDown();
            try {
                if (!allSawRoom.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("not every thread reached the hook");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<String>> labels = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String tenant = "tenant-" + t;
                labels.add(pool.submit(() -> metrics.label(tenant)));
            }
            long named = 0;
            for (Future<String> f : labels) {
                named += f.get(30, TimeUnit.SECONDS).equals(TenantMetrics.OTHER) ? 0 : 1;
            }
            assertThat(named).isEqualTo(limit);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A real gate (one fleet-wide bin of 100 tokens, fake clock) with these metrics as its listener. One request of
     * {@code a} runs; {@code a}, {@code b} (two) and {@code c} (three) wait in {@code default}, {@code d} in
     * {@code batch}. With two labels, {@code a} and {@code b} get their own series and {@code c} and {@code d} are
     * {@code other}; a client leaving and a timeout take their requests out of the gauges.
     */
    @Test
    void queueDepth_isPerTenantAndClass_withTenantsPastTheLabelLimitCountedAsOther() {
        TenantMetrics metrics = new TenantMetrics(registry, 2);
        QosGate gate = gate(metrics);
        metrics.bindQueueDepth(gate);
        QosTicket running = ticket("a", PriorityClass.DEFAULT);
        gate.offer(running);
        List<QosTicket> waiting = new ArrayList<>();
        for (String tenant : new String[] {"a", "b", "b", "c", "c", "c"}) {
            waiting.add(ticket(tenant, PriorityClass.DEFAULT));
            gate.offer(waiting.get(waiting.size() - 1));
        }
        gate.offer(ticket("d", PriorityClass.BATCH));
        assertThat(depths()).containsExactlyInAnyOrder(
                "class=\"default\",tenant=\"a\"} 1.0", "class=\"default\",tenant=\"b\"} 2.0",
                "class=\"default\",tenant=\"other\"} 3.0", "class=\"batch\",tenant=\"other\"} 1.0",
                "class=\"system\",tenant=\"other\"} 0.0", "class=\"interactive\",tenant=\"other\"} 0.0");
        gate.finished(waiting.get(3), null); // one of c's clients leaves while waiting
        assertThat(registry.scrape()).contains("kvroute_qos_queue_depth{class=\"default\",tenant=\"other\"} 2.0");
        nanos.addAndGet(61_000_000_000L); // past default's 60 s queue timeout, not batch's 300 s
        gate.tick();
        assertThat(depths()).containsExactlyInAnyOrder(
                "class=\"default\",tenant=\"a\"} 0.0", "class=\"default\",tenant=\"b\"} 0.0",
                "class=\"default\",tenant=\"other\"} 0.0", "class=\"batch\",tenant=\"other\"} 1.0",
                "class=\"system\",tenant=\"other\"} 0.0", "class=\"interactive\",tenant=\"other\"} 0.0");
    }

    /**
     * The gate preempts one way, an arriving request of a class that may preempt taking the place of a lower-class one
     * that has sent nothing, so the reason is the class that took the place; the series at zero are one per pair of
     * a class and a class above it.
     */
    @Test
    void preemptions_areCountedByThePreemptingClass() {
        TenantMetrics metrics = new TenantMetrics(registry, 50);
        metrics.registerSeriesAtZero();
        QosGate gate = gate(metrics);
        gate.offer(ticket("bulk", PriorityClass.BATCH));
        gate.offer(ticket("chat", PriorityClass.INTERACTIVE, 50)); // fits only once the batch request is gone
        String scrape = registry.scrape();
        assertThat(scrape).contains("kvroute_qos_preempted_total{class=\"batch\",reason=\"by_interactive\",tenant=\"bulk\"} 1.0");
        assertThat(scrape.lines().filter(l -> l.startsWith("kvroute_qos_preempted_total{") && l.contains("tenant=\"other\"")))
                .containsExactlyInAnyOrder(
                        "kvroute_qos_preempted_total{class=\"interactive\",reason=\"by_system\",tenant=\"other\"} 0.0",
                        "kvroute_qos_preempted_total{class=\"default\",reason=\"by_system\",tenant=\"other\"} 0.0",
                        "kvroute_qos_preempted_total{class=\"default\",reason=\"by_interactive\",tenant=\"other\"} 0.0",
                        "kvroute_qos_preempted_total{class=\"batch\",reason=\"by_system\",tenant=\"other\"} 0.0",
                        "kvroute_qos_preempted_total{class=\"batch\",reason=\"by_interactive\",tenant=\"other\"} 0.0",
                        "kvroute_qos_preempted_total{class=\"batch\",reason=\"by_default\",tenant=\"other\"} 0.0");
    }

    /** A gate of one fleet-wide bin of 100 tokens on the fake clock; a ticket costs the whole 100 unless told. */
    private QosGate gate(TenantMetrics metrics) {
        return new QosGate(TenantDirectory::empty, 100, 0, new FakeFleet(() -> 1), nanos::get, metrics);
    }

    private static QosTicket ticket(String tenant, PriorityClass c) {
        return ticket(tenant, c, 100);
    }

    private static QosTicket ticket(String tenant, PriorityClass c, long cost) {
        return new QosTicket(new TenantSpec(tenant, 1, PriorityClass.SYSTEM, 0, 0), c, cost, cost, null,
                new QosTicket.Callbacks() {
                    @Override
                    public void admitted() {}

                    @Override
                    public void rejected(int status, String reason, long retryAfterSeconds) {}

                    @Override
                    public void preempted(long retryAfterSeconds) {}
                });
    }

    private List<String> depths() {
        String prefix = "kvroute_qos_queue_depth{";
        return registry.scrape().lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).toList();
    }
}
