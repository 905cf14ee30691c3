package io.kvroute.router.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The router's meters, named once here so dashboards have one place to look. Every name is
 * exported with the {@code kvroute_} prefix by the Prometheus registry (counters gain
 * {@code _total}, timers {@code _seconds}).
 */
public final class RouterMetrics {

    private final PrometheusMeterRegistry registry;

    public RouterMetrics() {
        this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    public RouterMetrics(PrometheusMeterRegistry registry) {
        this.registry = registry;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition. */
    public String scrape() {
        return registry.scrape();
    }

    /** {@code kvroute_requests_total{endpoint,status}}: every answered request, by final status. */
    public void request(String endpoint, int status) {
        Counter.builder("kvroute.requests").tag("endpoint", endpoint).tag("status", Integer.toString(status))
                .register(registry).increment();
    }

    /** {@code kvroute_request_duration_seconds{endpoint,outcome}}: ingress to last byte. */
    public void duration(String endpoint, String outcome, long nanos) {
        Timer.builder("kvroute.request.duration").tag("endpoint", endpoint).tag("outcome", outcome)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(30))
                .register(registry).record(Duration.ofNanos(nanos));
    }

    /** {@code kvroute_time_to_first_byte_seconds{endpoint}}: ingress to the first relayed byte. */
    public void firstByte(String endpoint, long nanos) {
        Timer.builder("kvroute.time.to.first.byte").tag("endpoint", endpoint)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry).record(Duration.ofNanos(nanos));
    }

    /** {@code kvroute_policy_decisions_total{policy,reason}}. */
    public void decision(String policy, String reason) {
        Counter.builder("kvroute.policy.decisions").tag("policy", policy).tag("reason", reason)
                .register(registry).increment();
    }

    /** {@code kvroute_upstream_errors_total{worker,kind}}: connect, timeout, reset, status_5xx. */
    public void upstreamError(String worker, String kind) {
        Counter.builder("kvroute.upstream.errors").tag("worker", worker).tag("kind", kind)
                .register(registry).increment();
    }

    /** {@code kvroute_worker_in_flight{worker}}: router-local in-flight requests. */
    public void bindInFlight(String worker, AtomicInteger counter) {
        Gauge.builder("kvroute.worker.in.flight", counter, AtomicInteger::get).tag("worker", worker)
                .strongReference(true).register(registry);
    }

    /** {@code kvroute_worker_healthy{worker}}: 1 healthy, 0 not. */
    public void bindHealthy(String worker, java.util.function.BooleanSupplier healthy) {
        Gauge.builder("kvroute.worker.healthy", healthy, h -> h.getAsBoolean() ? 1 : 0).tag("worker", worker)
                .strongReference(true).register(registry);
    }
}
