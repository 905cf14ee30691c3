package io.kvroute.router.config;

/**
 * Access log and tracing: where the per-request JSON line goes, and whether (and how much) the
 * router traces. Handed to the access log and the request tracer.
 */
public record ObservabilityConfig(
        @Setting(name = "access-log", defaultValue = Setting.UNSET,
                description = "One JSON line per inference request (time, endpoint, model, status, bytes, TTFT, total, worker, "
                        + "policy, decision reason, matched tokens, retries, trace id): stdout or a file path appended to "
                        + "(default off).")
        String accessLog,
        @Setting(name = "otlp-traces-endpoint", defaultValue = Setting.UNSET,
                description = "OTLP/HTTP (protobuf) traces URL of a collector, e.g. http://collector:4318/v1/traces; enables "
                        + "tracing (default off: no tracing objects are created).")
        String otlpTracesEndpoint,
        @Setting(name = "trace-sampling-ratio", defaultValue = "1", min = 0, max = 1,
                description = "Share of new traces sampled, 0..1; a request with a traceparent keeps its caller's decision")
        double traceSamplingRatio) {

    public ObservabilityConfig {
        accessLog = accessLog == null || accessLog.isEmpty() ? null : accessLog;
        otlpTracesEndpoint = otlpTracesEndpoint == null || otlpTracesEndpoint.isEmpty() ? null : otlpTracesEndpoint;
        if (otlpTracesEndpoint != null) {
            String problem = ConfigValidator.urlProblem(otlpTracesEndpoint);
            if (problem != null) {
                throw ConfigValidator.fail("--otlp-traces-endpoint", otlpTracesEndpoint, problem);
            }
        }
    }

    /** Everything off. */
    public static final ObservabilityConfig OFF = SettingsBinder.defaults(ObservabilityConfig.class);

    public boolean tracingEnabled() {
        return otlpTracesEndpoint != null;
    }
}
