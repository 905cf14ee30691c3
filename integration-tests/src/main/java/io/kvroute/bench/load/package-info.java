/**
 * Load-plane benchmark: many real engine-side publishers feeding one router {@code LoadPlane}
 * over loopback tcp. Start at {@link io.kvroute.bench.load.LoadPlaneBench}; results and the
 * command are in {@code docs/benchmarks-load.md}.
 */
package io.kvroute.bench.load;
