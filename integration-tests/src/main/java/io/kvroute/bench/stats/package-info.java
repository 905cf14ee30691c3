/**
 * Plain statistics for the benchmark harness: exact percentiles ({@link io.kvroute.bench.stats.LatencyStats}),
 * per-variant metrics derived from request records ({@link io.kvroute.bench.stats.VariantMetrics}) and a tiny
 * Prometheus text parser for scraping the router's decision counters. No I/O, no Jetty.
 */
package io.kvroute.bench.stats;
