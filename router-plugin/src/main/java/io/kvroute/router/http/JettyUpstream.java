package io.kvroute.router.http;

import io.kvroute.router.dispatch.Completion;
import io.kvroute.router.dispatch.Upstream;
import io.kvroute.router.dispatch.UpstreamRequest;
import io.kvroute.router.metrics.RouterMetrics;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpMethod;

/**
 * The dispatch core's {@link Upstream} on Jetty's {@link HttpClient}: one POST per request, content
 * delivered asynchronously with demand (the next chunk is demanded only when the core's completion
 * succeeds; failing it aborts the request), the chunk retained until then.
 *
 * <p>Upstream URIs are parsed once per (worker, path) and reused: {@code newRequest(String)} parses
 * the URL on every call, which was a visible share of the relay's CPU (JFR profile of the
 * {@code proxy-overhead} benchmark, docs/benchmarks.md "Router efficiency"). The
 * cache is cleared when it reaches {@link #MAX_CACHED_URIS}, so worker churn cannot grow it.
 */
final class JettyUpstream implements Upstream {

    static final int MAX_CACHED_URIS = 4096;

    private final HttpClient client;
    private final RouterMetrics metrics;
    private final ConcurrentHashMap<String, URI> uris = new ConcurrentHashMap<>();

    /** The router's clock, for the stage timings of the overhead metrics. */
    private final java.util.function.LongSupplier nanoClock;

    JettyUpstream(HttpClient client, RouterMetrics metrics, java.util.function.LongSupplier nanoClock) {
        this.client = client;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
    }

    @Override
    public Call send(UpstreamRequest request, Listener listener) {
        Request proxyToWorker = client.newRequest(uri(request.url()))
                .method(HttpMethod.POST)
                .headers(h -> {
                    for (Map.Entry<String, String> header : request.headers().entrySet()) {
                        h.put(header.getKey(), header.getValue());
                    }
                })
                .body(new BytesRequestContent("application/json", request.body()))
                .timeout(request.timeoutMillis(), TimeUnit.MILLISECONDS)
                .idleTimeout(request.idleTimeoutMillis(), TimeUnit.MILLISECONDS);
        long handedNanos = nanoClock.getAsLong();
        long[] onConnectionNanos = {-1};
        // Stage timings of the router's overhead metrics: queue + connect until the request is written on
        // a connection, then the worker's time to its first byte. Listener callbacks of one request run
        // one after another.
        proxyToWorker.onRequestBegin(r -> onConnectionNanos[0] = nanoClock.getAsLong());
        proxyToWorker.onResponseBegin(r -> {
            long now = nanoClock.getAsLong();
            long begun = onConnectionNanos[0] < 0 ? now : onConnectionNanos[0];
            metrics.overheadUpstream(begun - handedNanos, now - begun);
        });
        proxyToWorker.onResponseHeaders(response -> listener.onHeaders(response.getStatus(), response.getHeaders()::get));
        proxyToWorker.onResponseContentAsync((response, chunk, demander) -> {
            ByteBuffer bytes = chunk.getByteBuffer();
            chunk.retain();
            listener.onContent(bytes, new Completion() {
                @Override
                public void succeeded() {
                    chunk.release();
                    demander.run();
                }

                @Override
                public void failed(Throwable failure) {
                    chunk.release();
                    proxyToWorker.abort(failure);
                }
            });
        });
        proxyToWorker.send(result -> listener.onComplete(
                result.getResponse() == null ? 0 : result.getResponse().getStatus(), concise(result.getFailure())));
        return proxyToWorker::abort;
    }

    /**
     * A response Jetty's parser refused (e.g. both {@code Transfer-Encoding} and {@code Content-Length}) as a
     * short cause naming the parser's reason: the client exception's own message dumps the connection's whole
     * state, which then went out in the client's 502. Any other failure is passed on as it is.
     */
    static Throwable concise(Throwable failure) {
        if (failure instanceof HttpResponseException refused && refused.getResponse() != null) {
            String reason = refused.getResponse().getReason();
            return new IOException("malformed HTTP response from the worker"
                    + (reason == null || reason.isBlank() ? "" : ": " + reason), failure);
        }
        return failure;
    }

    private URI uri(String url) {
        URI uri = uris.get(url);
        if (uri == null) {
            if (uris.size() >= MAX_CACHED_URIS) {
                uris.clear();
            }
            uri = URI.create(url);
            uris.put(url, uri);
        }
        return uri;
    }
}
