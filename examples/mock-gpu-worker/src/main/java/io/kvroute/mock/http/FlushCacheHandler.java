package io.kvroute.mock.http;

import static java.util.Objects.requireNonNull;

import io.kvroute.mock.engine.Engine;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * SGLang's {@code /flush_cache} (GET or POST; sgl-project/sglang
 * {@code python/sglang/srt/entrypoints/http_server.py}): empties the engine's prefix cache when no
 * request is running or waiting, and answers SGLang's plain-text body with 200, or the same body
 * with 400 when the engine refused because it is busy. The engine reports the flush to its KV-event
 * sink, so a subscribed router sees {@code AllBlocksCleared} on every rank. Any other path falls
 * through to the next handler. Never blocks a Jetty thread: the answer is written when the engine
 * thread has decided.
 */
public final class FlushCacheHandler extends Handler.Abstract.NonBlocking {
    /** SGLang's text, verbatim, for both outcomes (it never says which one happened in the body). */
    static final String BODY = "Cache flushed.\nPlease check backend logs for more details. "
            + "(When there are running or waiting requests, the operation will not be performed.)\n";
    /** How long a flush may wait for the engine thread before the client gets a 503. */
    private static final long ENGINE_TIMEOUT_SECONDS = 10;

    private final Engine engine;

    public FlushCacheHandler(Engine engine) {
        this.engine = requireNonNull(engine, "engine");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        if (!"/flush_cache".equals(Request.getPathInContext(request))) {
            return false;
        }
        String method = request.getMethod();
        if (!"GET".equals(method) && !"POST".equals(method)) {
            response.getHeaders().put(HttpHeader.ALLOW, "GET, POST");
            write(response, callback, 405, "application/json",
                    Replies.errorBody(405, "method_not_allowed", "/flush_cache only accepts GET and POST"));
            return true;
        }
        engine.flushCache().orTimeout(ENGINE_TIMEOUT_SECONDS, TimeUnit.SECONDS).whenComplete((flushed, failure) -> {
            if (failure != null) {
                write(response, callback, 503, "application/json", Replies.errorBody(503,
                        "service_unavailable", "the engine did not flush its cache: " + (failure instanceof TimeoutException
                                ? "no answer within " + ENGINE_TIMEOUT_SECONDS + " s" : failure.getMessage())));
            } else {
                write(response, callback, flushed ? 200 : 400, "text/plain; charset=utf-8", BODY);
            }
        });
        return true;
    }

    private static void write(Response response, Callback callback, int status, String contentType, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
