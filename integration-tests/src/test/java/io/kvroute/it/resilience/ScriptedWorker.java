package io.kvroute.it.resilience;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A worker on a real loopback port whose generation answers a test dictates: a fixed error
 * status, a good answer, or an SSE stream that dies or stalls after a few events. {@code /health}
 * is always 200 and discovery ({@code /server_info}, {@code /v1/models}) always answers, so only the
 * data path misbehaves; {@code /metrics} is 404, as on an engine without metrics. Counts the
 * generation requests it received.
 */
final class ScriptedWorker implements AutoCloseable {

    /** What the worker does with each generation request. */
    enum Script {
        /** A short non-streaming chat completion, or a 3-event SSE stream when asked to stream. */
        OK,
        /** 503 with a JSON error body. */
        UNAVAILABLE_503,
        /** 429 busy with Retry-After. */
        BUSY_429,
        /** 400 with a JSON error body (the client's fault). */
        BAD_REQUEST_400,
        /** Two SSE events, then the connection is torn down. */
        STREAM_THEN_DIE,
        /** One SSE event, then silence forever (the response never ends). */
        STREAM_THEN_STALL,
        /** A non-streaming answer that declares 1,000 bytes, sends the first 40, then tears the connection down. */
        BODY_THEN_DIE
    }

    private final Server server;
    private final ServerConnector connector;
    private final AtomicInteger hits = new AtomicInteger();
    private final AtomicInteger anyRequests = new AtomicInteger();
    private volatile Script script;

    private ScriptedWorker(Script script) throws Exception {
        this.script = script;
        server = new Server();
        HttpConfiguration config = new HttpConfiguration();
        config.setOutputAggregationSize(0);
        connector = new ServerConnector(server, new HttpConnectionFactory(config));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract(Handler.Abstract.InvocationType.BLOCKING) {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                return serve(request, response, callback);
            }
        });
        server.start();
    }

    static ScriptedWorker start(Script script) throws Exception {
        return new ScriptedWorker(script);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + connector.getLocalPort();
    }

    void script(Script next) {
        script = next;
    }

    /** Generation requests received so far. */
    int hits() {
        return hits.get();
    }

    /** Requests of any kind received so far, health probes included. */
    int anyRequests() {
        return anyRequests.get();
    }

    private boolean serve(Request request, Response response, Callback callback) throws Exception {
        anyRequests.incrementAndGet();
        String path = Request.getPathInContext(request);
        if (path.equals("/health")) {
            write(response, callback, 200, "application/json", "{\"status\":\"ok\"}");
            return true;
        }
        if (path.equals("/server_info")) {
            write(response, callback, 200, "application/json", "{\"model_id\":\"mock-model\"}");
            return true;
        }
        if (path.equals("/v1/models")) {
            write(response, callback, 200, "application/json",
                    "{\"object\":\"list\",\"data\":[{\"id\":\"mock-model\",\"object\":\"model\"}]}");
            return true;
        }
        if (path.equals("/metrics")) {
            // like an SGLang engine started without --enable-metrics: the router gets no scraped load
            write(response, callback, 404, "text/plain", "not found");
            return true;
        }
        String body = Content.Source.asString(request, StandardCharsets.UTF_8);
        hits.incrementAndGet();
        boolean stream = body.replace(" ", "").contains("\"stream\":true");
        switch (script) {
            case UNAVAILABLE_503 -> write(response, callback, 503, "application/json", error(503, "overloaded", "scripted 503"));
            case BUSY_429 -> {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
                write(response, callback, 429, "application/json", error(429, "busy", "scripted busy"));
            }
            case BAD_REQUEST_400 -> write(response, callback, 400, "application/json",
                    error(400, "invalid_request_error", "scripted: your request is wrong"));
            case STREAM_THEN_DIE -> {
                startSse(response);
                writeChunk(response, event("one") + event("two"));
                callback.failed(new java.io.IOException("scripted worker crash"));
            }
            case STREAM_THEN_STALL -> {
                startSse(response);
                writeChunk(response, event("one"));
                // never complete the callback: the upstream stream is stalled until the router gives up
            }
            case BODY_THEN_DIE -> {
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 1000);
                writeChunk(response, "{\"object\":\"chat.completion\",\"choices\":[");
                callback.failed(new java.io.IOException("scripted worker crash mid-body"));
            }
            case OK -> {
                if (stream) {
                    startSse(response);
                    writeChunk(response, event("a") + event("b") + event("c"));
                    response.write(true, utf8("data: [DONE]\n\n"), callback);
                } else {
                    write(response, callback, 200, "application/json",
                            "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                                    + "\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}");
                }
            }
            default -> throw new IllegalStateException("unknown script " + script);
        }
        return true;
    }

    private static void startSse(Response response) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
    }

    private static void writeChunk(Response response, String text) throws Exception {
        Callback.Completable written = new Callback.Completable();
        response.write(false, utf8(text), written);
        written.get(5, java.util.concurrent.TimeUnit.SECONDS);
    }

    private static String event(String piece) {
        return "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece
                + "\"}}]}\n\n";
    }

    private static String error(int status, String type, String message) {
        return "{\"error\":{\"message\":\"" + message + "\",\"type\":\"" + type + "\",\"code\":" + status + "}}";
    }

    private static void write(Response response, Callback callback, int status, String type, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.write(true, utf8(body), callback);
    }

    private static ByteBuffer utf8(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
