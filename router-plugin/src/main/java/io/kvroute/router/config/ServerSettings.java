package io.kvroute.router.config;

/**
 * What the router's listener accepts: the listen address, the separate metrics port, and the two
 * bounds on a client request the front door checks before any work (body size, {@code n}). Handed
 * to {@code RouterMain} and {@code MetricsPort} (address) and to the front door (bounds).
 */
public record ServerSettings(
        @Setting(name = "host", defaultValue = "127.0.0.1", description = "Listen address")
        String host,
        @Setting(name = "port", defaultValue = "30000", min = 0, max = 65535,
                description = "Listen port; 0 picks a free one")
        int port,
        @Setting(name = "metrics-port", defaultValue = Setting.UNSET, min = 0, max = 65535,
                description = "Serve /metrics on this port (same --host, no API key) instead of the main port; 0 picks a "
                        + "free one (default unset: /metrics on the main port, behind --api-key when set).")
        Integer metricsPort,
        @Setting(name = "max-body-bytes", defaultValue = "33554432", min = 1,
                description = "Largest accepted request body in bytes; 33554432 is 32 MiB")
        long maxBodyBytes,
        @Setting(name = "max-n", defaultValue = "128", min = 1, max = 65_536,
                description = "Largest n (sequences per request) a client may ask for, OpenAI's limit by default; more is "
                        + "a 400 invalid_request_error naming n. Checked on every endpoint, top level and sampling_params.n")
        int maxN) {

    public ServerSettings {
        if (host == null || host.isBlank()) {
            throw ConfigValidator.fail("--host", host, "must not be empty");
        }
        if (metricsPort != null && metricsPort != 0 && metricsPort == port) {
            throw ConfigValidator.fail("--metrics-port", metricsPort, "must differ from --port");
        }
    }

    public static final ServerSettings DEFAULTS = SettingsBinder.defaults(ServerSettings.class);
}
