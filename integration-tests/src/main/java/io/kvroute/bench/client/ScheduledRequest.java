package io.kvroute.bench.client;

import java.util.Map;
import java.util.Objects;

/**
 * One request of an open-loop workload: when to send it (wall-clock nanoseconds after the run
 * starts), where (a path on the router, e.g. {@code /v1/chat/completions}), the JSON body, its
 * class for split metrics ({@code short}, {@code long}; may be empty) and an optional tag that
 * groups requests for per-step series (the saturation scenario tags each arrival-rate step), and the
 * request's own HTTP headers (e.g. {@code Authorization: Bearer <tenant key>}, {@code x-kvroute-priority};
 * empty for most scenarios), sent in addition to the client's {@code Accept}.
 */
public record ScheduledRequest(long sendAtNanosFromStart, String path, byte[] jsonBody, String requestClass, String tag,
        Map<String, String> headers) {

    public ScheduledRequest {
        if (sendAtNanosFromStart < 0) {
            throw new IllegalArgumentException("sendAtNanosFromStart must be >= 0: " + sendAtNanosFromStart);
        }
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(jsonBody, "jsonBody");
        requestClass = requestClass == null ? "" : requestClass;
        tag = tag == null ? "" : tag;
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    /** A request without headers of its own. */
    public ScheduledRequest(long sendAtNanosFromStart, String path, byte[] jsonBody, String requestClass, String tag) {
        this(sendAtNanosFromStart, path, jsonBody, requestClass, tag, Map.of());
    }

    public ScheduledRequest(long sendAtNanosFromStart, String path, byte[] jsonBody, String requestClass) {
        this(sendAtNanosFromStart, path, jsonBody, requestClass, "");
    }

    /** The same request with its send time divided by {@code timeScale} (simulated to wall time). */
    public ScheduledRequest compressedBy(double timeScale) {
        if (!(timeScale > 0)) {
            throw new IllegalArgumentException("timeScale must be > 0: " + timeScale);
        }
        return new ScheduledRequest(Math.round(sendAtNanosFromStart / timeScale), path, jsonBody, requestClass, tag, headers);
    }
}
