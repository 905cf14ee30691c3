package io.kvroute.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * Reads a counter of the mock workers' engines from their {@code GET /scheduler} view
 * ({@code counters.NAME}), summed over the fleet. A worker that cannot be read counts as NaN in the sum,
 * with a warning, instead of failing the benchmark.
 */
final class WorkerCounters {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private WorkerCounters() {}

    static double sum(List<String> workerUrls, String name) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        double total = 0;
        for (String url : workerUrls) {
            try {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url + "/scheduler")).timeout(TIMEOUT)
                        .GET().build(), HttpResponse.BodyHandlers.ofString());
                JsonNode counter = JSON.readTree(r.body()).path("counters").get(name);
                total += counter == null ? Double.NaN : counter.asDouble();
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                System.err.println("warning: cannot read " + name + " from " + url + "/scheduler: " + e);
                total = Double.NaN;
            }
        }
        return total;
    }
}
