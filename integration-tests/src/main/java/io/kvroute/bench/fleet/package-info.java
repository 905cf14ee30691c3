/**
 * How scenarios get a running router + mock GPU workers: {@link io.kvroute.bench.fleet.FleetFactory}
 * starts a {@link io.kvroute.bench.fleet.Fleet} from a {@link io.kvroute.bench.fleet.FleetSpec}. The harness
 * codes against these interfaces only; {@link io.kvroute.bench.fleet.InProcessFleetFactory} (start reading
 * there) implements them over {@code MockWorkerMain}/{@code RouterMain} and plugs in through
 * {@link java.util.ServiceLoader}.
 */
package io.kvroute.bench.fleet;
