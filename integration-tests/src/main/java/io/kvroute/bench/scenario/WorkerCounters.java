package io.kvroute.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * Reads a counter of the mock workers' engines from their {@code GET /scheduler} view
 * ({@code counters.NAME}): per worker, or summed over the fleet.
 */
public final class WorkerCounters {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private WorkerCounters() {}

    /** The counter of each worker, in {@code workerUrls} order; a worker without it fails the read. */
    public static double[] perWorker(HttpClient client, List<String> workerUrls, String name)
            throws IOException, InterruptedException {
        double[] out = new double[workerUrls.size()];
        for (int i = 0; i < out.length; i++) {
            String url = workerUrls.get(i) + "/scheduler";
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode counter = JSON.readTree(r.body()).path("counters").get(name);
            if (counter == null) {
                throw new IOException(url + " has no counter " + name + " (status " + r.statusCode() + ")");
            }
            out[i] = counter.asDouble();
        }
        return out;
    }

    /** The counter summed over the fleet; NaN, with a warning, when a worker cannot be read (a benchmark goes on). */
    static double sum(List<String> workerUrls, String name) {
        try {
            double total = 0;
            for (double v : perWorker(HttpClient.newBuilder().connectTimeout(TIMEOUT).build(), workerUrls, name)) {
                total += v;
            }
            return total;
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            System.err.println("warning: cannot read " + name + " from the workers' /scheduler: " + e);
            return Double.NaN;
        }
    }
}
