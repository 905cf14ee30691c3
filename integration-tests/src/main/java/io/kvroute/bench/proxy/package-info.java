/**
 * Proxy-efficiency benchmarks (docs/benchmarks.md "Router efficiency"): how much throughput and
 * latency the router adds over a
 * minimal upstream, side by side in one run. Start with {@link io.kvroute.bench.proxy.ProxyOverheadScenario}
 * (direct vs kvroute vs an nginx reverse proxy when installed) and
 * {@link io.kvroute.bench.proxy.FleetScaleScenario} (4 to 1,024 workers on loopback addresses).
 * {@link io.kvroute.bench.proxy.FixedReplyUpstream} is the upstream, {@link io.kvroute.bench.proxy.ClosedLoopLoad}
 * the load generator (wrk is used instead when installed).
 */
package io.kvroute.bench.proxy;
