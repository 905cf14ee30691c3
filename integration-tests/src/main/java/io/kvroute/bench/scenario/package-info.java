/**
 * Built-in fleet scenarios ({@link io.kvroute.bench.scenario.Scenarios#builtIn()}, start reading there):
 * each is a {@link io.kvroute.bench.scenario.FleetWorkloadScenario} pairing a seeded workload with one
 * fleet configuration per variant, run through the open-loop client against a fresh fleet. A variant
 * whose router flags the router rejects is skipped. {@link io.kvroute.bench.scenario.TreeScenario}
 * (the {@code tree} micro-benchmark table) plugs in through {@link java.util.ServiceLoader}.
 */
package io.kvroute.bench.scenario;
