/**
 * Built-in fleet scenarios ({@link io.kvroute.bench.scenario.Scenarios#builtIn()}): each is a
 * {@link io.kvroute.bench.scenario.FleetWorkloadScenario} pairing a seeded workload with one fleet
 * configuration per variant, run through the open-loop client against a fresh fleet.
 */
package io.kvroute.bench.scenario;
