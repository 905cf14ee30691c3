package io.kvroute.scheduler.jetty;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Config of the Jetty-hosted scheduler.
 *
 * @param loadEndpoint where the load publisher binds ({@code tcp://HOST:PORT}, port {@code *} or 0 =
 *     any free port; {@code none} = do not publish load reports)
 * @param idleReportMillis how often an idle engine's load is offered to the publisher (its own rules
 *     decide what is sent: unchanged stats at most once a second); well under the router's 5 s freshness
 * @param serveServerInfo true: answer {@code /server_info} with the advert; false: the host serves
 *     {@code /server_info} and merges {@link KvScheduler#serverInfo()} into it
 */
public record SchedulerConfig(String loadEndpoint, long idleReportMillis, boolean serveServerInfo) {

    public static final String PREFIX = "kvroute.scheduler.";
    private static final List<String> KEYS = List.of("load-endpoint", "idle-report-ms", "serve-server-info");

    public SchedulerConfig {
        if (loadEndpoint == null || loadEndpoint.isBlank()) {
            throw new IllegalArgumentException(PREFIX + "load-endpoint must be tcp://HOST:PORT or none");
        }
        if (idleReportMillis < 10 || idleReportMillis > 60_000) {
            throw new IllegalArgumentException(PREFIX + "idle-report-ms must be within 10..60000, got " + idleReportMillis);
        }
    }

    /** Any free port on loopback, idle report every 200 ms, {@code /server_info} served. */
    public static SchedulerConfig defaults() {
        return new SchedulerConfig("tcp://127.0.0.1:*", 200, true);
    }

    public SchedulerConfig withLoadEndpoint(String endpoint) {
        return new SchedulerConfig(endpoint, idleReportMillis, serveServerInfo);
    }

    public SchedulerConfig withServeServerInfo(boolean serve) {
        return new SchedulerConfig(loadEndpoint, idleReportMillis, serve);
    }

    public boolean publishesLoad() {
        return !loadEndpoint.equals("none");
    }

    /**
     * From {@code kvroute.scheduler.*} properties (a jetty-home base's start.d ini); null or blank
     * values keep the defaults; unknown keys and bad values fail naming the key.
     */
    public static SchedulerConfig fromProperties(Map<String, String> properties) {
        SchedulerConfig config = defaults();
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String value = entry.getValue();
            if (value == null || value.isBlank()) {
                continue;
            }
            String key = entry.getKey().startsWith(PREFIX) ? entry.getKey().substring(PREFIX.length()) : entry.getKey();
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("unknown kvroute scheduler property '" + entry.getKey()
                        + "' (known: " + PREFIX + String.join(", " + PREFIX, KEYS) + ")");
            }
            String v = value.trim();
            switch (key) {
                case "load-endpoint" -> config = config.withLoadEndpoint(v);
                case "idle-report-ms" -> {
                    try {
                        config = new SchedulerConfig(config.loadEndpoint, Long.parseLong(v), config.serveServerInfo);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(entry.getKey() + " must be a whole number of ms, got '" + v + "'", e);
                    }
                }
                default -> {
                    if (!v.equals("true") && !v.equals("false")) {
                        throw new IllegalArgumentException(entry.getKey() + " must be true or false, got '" + v + "'");
                    }
                    config = config.withServeServerInfo(Boolean.parseBoolean(v));
                }
            }
        }
        return config;
    }
}
