package io.kvroute.router.config;

/**
 * Access log and tracing settings, grouped so the flags travel as one value.
 *
 * @param accessLog {@code stdout}, a file path, or null for no access log ({@code --access-log})
 * @param otlpTracesEndpoint the collector's OTLP/HTTP traces URL, or null for no tracing
 *     ({@code --otlp-traces-endpoint})
 * @param traceSamplingRatio share of new traces sampled, 0..1 ({@code --trace-sampling-ratio})
 */
public record ObservabilityConfig(String accessLog, String otlpTracesEndpoint, double traceSamplingRatio) {

    /** Everything off. */
    public static final ObservabilityConfig OFF = new ObservabilityConfig(null, null, 1.0);

    public boolean tracingEnabled() {
        return otlpTracesEndpoint != null;
    }
}
