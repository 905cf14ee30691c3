/**
 * The kvroute benchmark harness. Start at {@link io.kvroute.bench.BenchMain} (the CLI); a
 * {@link io.kvroute.bench.Scenario} runs each of its variants and returns a
 * {@link io.kvroute.bench.VariantResult}; {@code report} turns results into files; {@code client} is the
 * open-loop load generator; {@code workload} the seeded generators; {@code fleet} the seam where the
 * router and mock workers are started. Subpackages {@code jmh}, {@code tree} and {@code load} hold
 * micro-benchmarks owned separately.
 */
package io.kvroute.bench;
