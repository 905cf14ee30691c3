/** Micrometer meters with the Prometheus registry: {@link io.kvroute.router.metrics.RouterMetrics}. */
package io.kvroute.router.metrics;
