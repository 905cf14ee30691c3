/**
 * Production-trace replay: Mooncake's conversation trace through the real router, in real time
 * ({@link io.kvroute.bench.trace.MooncakeTraceScenario}, scenario {@code mooncake-trace}) and in
 * virtual time against simulated engines at fleet scale ({@link io.kvroute.bench.trace.VirtualTimeScenario},
 * scenario {@code mooncake-trace-vt}). Start reading at {@link io.kvroute.bench.trace.BlockTokens}
 * (hash ids to tokens), then the two scenarios; docs/benchmarks.md has the method and the results.
 */
package io.kvroute.bench.trace;
