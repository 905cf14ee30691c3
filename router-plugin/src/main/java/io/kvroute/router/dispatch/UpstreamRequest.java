package io.kvroute.router.dispatch;

import java.util.Map;

/**
 * One request to a worker, fully built by {@link UpstreamRequests}.
 *
 * @param hop plain worker, PD prefill or PD decode
 * @param url absolute URL (worker base + endpoint path)
 * @param body the JSON body
 * @param headers extra request headers (Accept, and whatever the hooks add), in order
 * @param timeoutMillis total request timeout
 * @param idleTimeoutMillis idle timeout between bytes
 */
public record UpstreamRequest(Failure.Hop hop, String url, byte[] body, Map<String, String> headers,
        long timeoutMillis, long idleTimeoutMillis) {}
