package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

/**
 * Turns an engine's advertised bind endpoint into one a router can connect to: a publisher bound
 * on a wildcard host ({@code *}, {@code 0.0.0.0}, {@code [::]}) advertises that wildcard, which
 * means "the engine's own host".
 */
public final class LoadEndpoints {
    private LoadEndpoints() {}

    /** {@code tcp://0.0.0.0:5560} with host {@code 10.0.0.7} gives {@code tcp://10.0.0.7:5560}; others unchanged. */
    public static String connectable(String advertised, String workerHost) {
        requireNonNull(advertised, "advertised");
        requireNonNull(workerHost, "workerHost");
        for (String wildcard : new String[] {"tcp://*:", "tcp://0.0.0.0:", "tcp://[::]:", "tcp://[::0]:"}) {
            if (advertised.startsWith(wildcard)) {
                String host = workerHost.contains(":") && !workerHost.startsWith("[") ? "[" + workerHost + "]" : workerHost;
                return "tcp://" + host + ":" + advertised.substring(wildcard.length());
            }
        }
        return advertised;
    }
}
