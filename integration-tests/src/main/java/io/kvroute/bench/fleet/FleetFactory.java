package io.kvroute.bench.fleet;

/**
 * Starts fleets for scenarios. The production implementation, {@link InProcessFleetFactory}, starts
 * {@code io.kvroute.mock.MockWorkerMain.start(...)} per worker and then
 * {@code io.kvroute.router.plugin.RouterMain.start(...)} with the workers' URLs; it is found through
 * {@link java.util.ServiceLoader} (a {@code META-INF/services/io.kvroute.bench.fleet.FleetFactory}
 * entry), see {@link FleetFactories#load()}. Tests pass their own.
 */
@FunctionalInterface
public interface FleetFactory {

    /** Starts the servers and returns once they accept requests; the caller closes the fleet. */
    Fleet start(FleetSpec spec) throws Exception;
}
