package io.kvroute.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A tiny in-process OpenAI-compatible stand-in on an ephemeral loopback port, used by the
 * {@code harness-selftest} scenario (to measure what the harness itself costs) and by tests:
 * {@code POST /v1/chat/completions} waits {@code firstTokenDelayMillis}, then streams
 * {@code max_tokens} content chunks {@code perTokenDelayMillis} apart (or answers plain JSON when
 * the body does not ask to stream), then a usage chunk and {@code [DONE]}; {@code GET /metrics}
 * serves fixed Prometheus text. It counts requests in flight so tests can see concurrency.
 */
public final class LoopbackOpenAiServer implements AutoCloseable {

    public static final String METRICS = """
            # HELP kvroute_policy_decisions_total Routing decisions.
            # TYPE kvroute_policy_decisions_total counter
            kvroute_policy_decisions_total{policy="cache_aware",reason="cache_hit"} 7.0
            kvroute_policy_decisions_total{policy="cache_aware",reason="load_balance"} 3.0
            kvroute_policy_decisions_total{policy="round_robin",reason="load_balance"} 2.0
            """;

    private final ObjectMapper json = new ObjectMapper();
    private final Server server;
    private final long firstTokenDelayMillis;
    private final long perTokenDelayMillis;
    private final int status;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger received = new AtomicInteger();
    /** The headers of the last {@link #KEPT_HEADERS} chat requests, newest last (for tests). */
    private final ConcurrentLinkedDeque<HttpFields> receivedHeaders = new ConcurrentLinkedDeque<>();
    private static final int KEPT_HEADERS = 256;

    public LoopbackOpenAiServer(long firstTokenDelayMillis, long perTokenDelayMillis, int status) throws Exception {
        this.firstTokenDelayMillis = firstTokenDelayMillis;
        this.perTokenDelayMillis = perTokenDelayMillis;
        this.status = status;
        QueuedThreadPool threads = new QueuedThreadPool(256, 8);
        threads.setName("loopback-openai");
        server = new Server(threads);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = Request.getPathInContext(request);
                if (path.equals("/metrics")) {
                    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4");
                    Content.Sink.write(response, true, METRICS, callback);
                    return true;
                }
                received.incrementAndGet();
                receivedHeaders.addLast(request.getHeaders().asImmutable());
                while (receivedHeaders.size() > KEPT_HEADERS) {
                    receivedHeaders.pollFirst();
                }
                int now = inFlight.incrementAndGet();
                maxInFlight.accumulateAndGet(now, Math::max);
                try {
                    chat(request, response);
                    callback.succeeded();
                } catch (InterruptedException e) {
                    callback.failed(e); // server stopping mid-request
                } catch (Exception e) {
                    callback.failed(e);
                } finally {
                    inFlight.decrementAndGet();
                }
                return true;
            }
        });
        server.start();
    }

    private void chat(Request request, Response response) throws Exception {
        JsonNode body = json.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
        int maxTokens = body.path("max_tokens").asInt(4);
        boolean stream = body.path("stream").asBoolean(false);
        Thread.sleep(firstTokenDelayMillis);
        response.setStatus(status);
        if (status != 200) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            try (OutputStream out = Content.Sink.asOutputStream(response)) {
                out.write("{\"error\":{\"message\":\"busy\",\"type\":\"server_error\"}}".getBytes(StandardCharsets.UTF_8));
            }
            return;
        }
        String usage = "{\"prompt_tokens\":100,\"completion_tokens\":" + maxTokens
                + ",\"prompt_tokens_details\":{\"cached_tokens\":25}}";
        if (!stream) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            try (OutputStream out = Content.Sink.asOutputStream(response)) {
                out.write(("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hello\"}}],\"usage\":" + usage + "}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            return;
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            out.write("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n".getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < maxTokens; i++) {
                if (i > 0) {
                    Thread.sleep(perTokenDelayMillis);
                }
                out.write(("data: {\"choices\":[{\"delta\":{\"content\":\"t" + i + "\"}}]}\n\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            out.write(("data: {\"choices\":[],\"usage\":" + usage + "}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    public int maxInFlight() {
        return maxInFlight.get();
    }

    /** The values of header {@code name} on the last chat requests received (null where absent), oldest first. */
    public List<String> receivedHeader(String name) {
        List<String> values = new ArrayList<>();
        receivedHeaders.forEach(h -> values.add(h.get(name)));
        return values;
    }

    public int received() {
        return received.get();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
