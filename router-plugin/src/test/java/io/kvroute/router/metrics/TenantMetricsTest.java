package io.kvroute.router.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.tenant.PriorityClass;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/** Tenant labels stay bounded however many tenants there are. */
class TenantMetricsTest {

    @Test
    void tenantsPastTheLabelLimit_areLabelledOther() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
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
    }
}
