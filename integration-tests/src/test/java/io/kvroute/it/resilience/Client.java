package io.kvroute.it.resilience;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;

/**
 * A test client over Jetty's HttpClient. Every call is bounded by a timeout, so a hung router
 * shows up as a failed future, never as a hung test.
 */
final class Client implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();

    /** A finished exchange; {@code failure} is set when the response started but did not end cleanly. */
    record Reply(int status, String body, Map<String, String> headers, Throwable failure) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (java.io.IOException e) {
                throw new AssertionError("not JSON (" + status + "): " + body, e);
            }
        }

        String header(String name) {
            return headers.get(name.toLowerCase(java.util.Locale.ROOT));
        }

        /** True for an OpenAI-style JSON error whose code matches the status. */
        boolean isOpenAiError() {
            if (!String.valueOf(header("content-type")).startsWith("application/json")) {
                return false;
            }
            JsonNode error = json().path("error");
            return !error.path("message").asText("").isBlank() && !error.path("type").asText("").isBlank()
                    && error.path("code").asInt() == status;
        }
    }

    final HttpClient http = new HttpClient();
    private final long timeoutSecs;

    Client() throws Exception {
        this(60);
    }

    Client(long timeoutSecs) throws Exception {
        this.timeoutSecs = timeoutSecs;
        http.setMaxConnectionsPerDestination(1024);
        http.setMaxRequestsQueuedPerDestination(65536);
        http.setIdleTimeout(120_000);
        http.start();
    }

    Reply get(String url, String... headers) throws Exception {
        return send("GET", url, null, null, headers).get(timeoutSecs + 5, TimeUnit.SECONDS);
    }

    Reply postJson(String url, String json, String... headers) throws Exception {
        return send("POST", url, "application/json", json.getBytes(StandardCharsets.UTF_8), headers)
                .get(timeoutSecs + 5, TimeUnit.SECONDS);
    }

    Reply request(String method, String url, String json, String... headers) throws Exception {
        return send(method, url, json == null ? null : "application/json",
                json == null ? null : json.getBytes(StandardCharsets.UTF_8), headers).get(timeoutSecs + 5, TimeUnit.SECONDS);
    }

    CompletableFuture<Reply> postAsync(String url, String json) {
        return send("POST", url, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Sends a request; the future completes with the reply, or exceptionally when the exchange
     * failed without a status (connection refused, reset before headers, client timeout).
     */
    CompletableFuture<Reply> send(String method, String url, String contentType, byte[] body, String... headers) {
        return send(method, url, contentType, body, null, headers);
    }

    /** As {@link #send}, counting {@code firstChunk} down when the first body bytes arrive. */
    CompletableFuture<Reply> send(String method, String url, String contentType, byte[] body, CountDownLatch firstChunk,
            String... headers) {
        CompletableFuture<Reply> done = new CompletableFuture<>();
        StringBuilder text = new StringBuilder();
        Map<String, String> replyHeaders = new ConcurrentHashMap<>();
        Request request = http.newRequest(url).method(method).timeout(timeoutSecs, TimeUnit.SECONDS);
        for (int i = 0; i + 1 < headers.length; i += 2) {
            String name = headers[i];
            String value = headers[i + 1];
            request.headers(h -> h.put(name, value));
        }
        if (body != null) {
            request.body(new BytesRequestContent(contentType, body));
        }
        request.onResponseHeaders(r -> r.getHeaders().forEach(f -> replyHeaders.put(f.getLowerCaseName(), f.getValue())))
                .onResponseContent((r, buffer) -> {
                    synchronized (text) {
                        text.append(StandardCharsets.UTF_8.decode(buffer.duplicate()));
                    }
                    if (firstChunk != null) {
                        firstChunk.countDown();
                    }
                })
                .send(result -> {
                    int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
                    if (result.isFailed() && status == 0) {
                        done.completeExceptionally(result.getFailure());
                        return;
                    }
                    synchronized (text) {
                        done.complete(new Reply(status, text.toString(), replyHeaders, result.getFailure()));
                    }
                });
        return done;
    }

    static String chat(boolean stream, int maxTokens) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":" + maxTokens
                + ",\"stream\":" + stream + "}";
    }

    @Override
    public void close() throws Exception {
        http.stop();
    }
}
