package io.kvroute.router.config;

/**
 * How long the router waits: for a worker's whole answer, for a TCP connect, for the next chunk of
 * a stream, and for in-flight requests to finish at shutdown. Handed to the upstream request
 * factory, the HTTP client and the drain.
 */
public record TimeoutSettings(
        @Setting(name = "request-timeout-secs", defaultValue = "1800", positive = true,
                description = "Whole-request timeout towards a worker")
        double requestSecs,
        @Setting(name = "connect-timeout-secs", defaultValue = "5", positive = true,
                description = "TCP connect timeout towards a worker")
        double connectSecs,
        @Setting(name = "stream-idle-timeout-secs", defaultValue = "180", positive = true,
                description = "Streaming requests: longest silence from a worker before the stream ends with an SSE error event")
        double streamIdleSecs,
        @Setting(name = "shutdown-drain-secs", defaultValue = "30", min = 0,
                description = "On shutdown, how long in-flight requests may finish")
        double shutdownDrainSecs) {

    public static final TimeoutSettings DEFAULTS = SettingsBinder.defaults(TimeoutSettings.class);

    public long requestMillis() {
        return (long) (requestSecs * 1000);
    }

    public long connectMillis() {
        return (long) (connectSecs * 1000);
    }

    public long streamIdleMillis() {
        return (long) (streamIdleSecs * 1000);
    }

    public long shutdownDrainNanos() {
        return (long) (shutdownDrainSecs * 1e9);
    }
}
