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
import java.util.concurrent.atomic.AtomicLong;
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
