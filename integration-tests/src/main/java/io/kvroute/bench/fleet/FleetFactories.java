package io.kvroute.bench.fleet;

import java.util.Iterator;
import java.util.ServiceLoader;

/** Finds the fleet factory on the class path. */
public final class FleetFactories {

    private FleetFactories() {}

    /**
     * The first {@link FleetFactory} registered through {@link ServiceLoader}, or a factory whose
     * {@code start} fails with a message saying none is registered (so scenarios that need no
     * fleet still run).
     */
    public static FleetFactory load() {
        Iterator<FleetFactory> found = ServiceLoader.load(FleetFactory.class).iterator();
        if (found.hasNext()) {
            return found.next();
        }
        return spec -> {
            throw new IllegalStateException("no io.kvroute.bench.fleet.FleetFactory registered in "
                    + "META-INF/services; the router/mock-worker fleet is not wired into the harness yet");
        };
    }
}
