package io.kvroute.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;

/** A small test client over Jetty's HttpClient, recording when each response chunk arrived. */
final class Http implements AutoCloseable {

    /** A finished exchange with chunk arrival times (nanoseconds since the request was sent). */
    record Reply(int status, String body, List<Long> chunkNanos, java.util.Map<String, String> headers) {}

    final HttpClient client = new HttpClient();

    Http() throws Exception {
        client.setMaxConnectionsPerDestination(512);
        client.start();
    }

    ContentResponse get(String url) throws Exception {
        return client.newRequest(url).timeout(10, TimeUnit.SECONDS).send();
    }

    ContentResponse post(String url, String contentType, byte[] body) throws Exception {
        return client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .body(new BytesRequestContent(contentType, body)).send();
    }

    ContentResponse postJson(String url, String json) throws Exception {
        return post(url, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /** Posts JSON and records chunk arrival times; completes when the response ends. */
    CompletableFuture<Reply> stream(String url, String json) {
        CompletableFuture<Reply> done = new CompletableFuture<>();
        long start = System.nanoTime();
        List<Long> arrivals = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        java.util.Map<String, String> headers = new java.util.concurrent.ConcurrentHashMap<>();
        client.newRequest(url).method(HttpMethod.POST).timeout(60, TimeUnit.SECONDS)
                .body(new StringRequestContent("application/json", json))
                .onResponseHeaders(r -> r.getHeaders().forEach(f -> headers.put(f.getLowerCaseName(), f.getValue())))
                .onResponseContent((r, buffer) -> {
                    synchronized (arrivals) {
                        arrivals.add(System.nanoTime() - start);
                        text.append(StandardCharsets.UTF_8.decode(buffer.duplicate()));
                    }
                })
                .send(result -> {
                    synchronized (arrivals) {
                        int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
                        if (result.isFailed() && status == 0) {
                            done.completeExceptionally(result.getFailure());
                        } else {
                            done.complete(new Reply(status, text.toString(), List.copyOf(arrivals), headers));
                        }
                    }
                });
        return done;
    }

    @Override
    public void close() throws Exception {
        client.stop();
    }
}
