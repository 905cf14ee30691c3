package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tenant.TenantDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --qos-engine-priority} end to end: a tenants router over a vLLM-API worker with
 * {@code --scheduling-policy priority}, an SGLang-API worker with {@code --enable-priority-scheduling}
 * and a vLLM-API worker left at fcfs. Each worker receives the request's class in its engine's sense
 * (vLLM lower first, SGLang higher first), the default class sends none, a client's own
 * {@code priority} is dropped, and the fcfs vLLM worker's 400 for the router's field never reaches a
 * client: the router asks it again without the field and sends it none from then on. The access log
 * names each request's tenant and its class after the clamp.
 */
class EnginePriorityE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TENANTS = "tenants:\n"
            + "  - {name: chat, api_key_sha256: " + TenantDirectory.sha256Hex("sk-chat") + ", max_class: interactive}\n"
            + "  - {name: bulk, api_key_sha256: " + TenantDirectory.sha256Hex("sk-bulk") + ", max_class: batch}\n";

    @TempDir
    Path dir;

    private static ContentResponse chat(Http http, String url, String key, String priorityHeader, String extra)
            throws Exception {
        String body = "{\"model\":\"mock-model\",\"max_tokens\":2" + extra
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        var request = http.client.newRequest(url).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .headers(h -> h.put("Authorization", "Bearer " + key))
                .body(new StringRequestContent("application/json", body));
        if (priorityHeader != null) {
            request.headers(h -> h.put("x-kvroute-priority", priorityHeader));
        }
        return request.send();
    }

    /** The priority field of each body a worker received since {@code from} ("-" when absent). */
    private static List<String> priorities(MockWorkerMain.MockWorker worker, int from) {
        List<JsonNode> bodies = worker.handler().recentBodies();
        List<String> out = new ArrayList<>();
        for (JsonNode b : bodies.subList(from, bodies.size())) {
            out.add(b.has("priority") ? b.get("priority").asText() : "-");
        }
        return out;
    }

    @Test
    void eachEngineGetsTheClassInItsOwnSense_andAnFcfsVllmWorkerNeverFailsAClient() throws Exception {
        Path tenants = dir.resolve("tenants.yaml");
        Files.writeString(tenants, TENANTS);
        List<String> fast = List.of("--port", "0", "--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
        List<MockWorkerMain.MockWorker> workers = new ArrayList<>();
        try (Http http = new Http()) {
            List<String> vllmPriority = new ArrayList<>(fast);
            vllmPriority.addAll(List.of("--engine-api", "vllm", "--scheduling-policy", "priority"));
            List<String> sglangPriority = new ArrayList<>(fast);
            sglangPriority.add("--enable-priority-scheduling");
            List<String> vllmFcfs = new ArrayList<>(fast);
            vllmFcfs.addAll(List.of("--engine-api", "vllm"));
            workers.add(MockWorkerMain.start(vllmPriority.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(sglangPriority.toArray(String[]::new)));
            workers.add(MockWorkerMain.start(vllmFcfs.toArray(String[]::new)));
            List<String> urls = workers.stream().map(MockWorkerMain.MockWorker::baseUrl).toList();
            Path accessLog = dir.resolve("access.log");
            try (RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--worker-urls", String.join(",", urls),
                    "--policy", "round_robin", "--tenants-file", tenants.toString(), "--qos-engine-priority", "true",
                    "--health-check-interval-secs", "0.2", "--access-log", accessLog.toString())) {
                // typed from their HTTP surface: vLLM load comes from /metrics
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    Map<String, String> sources = new HashMap<>();
                    for (JsonNode w : JSON.readTree(http.get(router.baseUrl() + "/v1/loads").getContentAsString())
                            .path("workers")) {
                        sources.put(w.path("url").asText(), w.path("load_source").asText());
                    }
                    return "metrics".equals(sources.get(urls.get(0))) && "loadstat".equals(sources.get(urls.get(1)))
                            && "metrics".equals(sources.get(urls.get(2)));
                });
                String url = router.baseUrl() + "/v1/chat/completions";
                int[] from = new int[3];

                // interactive: round robin sends one to each worker, twice over
                for (int i = 0; i < 6; i++) {
                    assertThat(chat(http, url, "sk-chat", "interactive", "").getStatus()).as("interactive %d", i)
                            .isEqualTo(200);
                }
                assertThat(priorities(workers.get(0), from[0])).containsExactly("-1", "-1");
                assertThat(priorities(workers.get(1), from[1])).containsExactly("1", "1");
                // fcfs vLLM: the first ask with the field got its 400, the same request again without it,
                // and the next request none at all
                assertThat(priorities(workers.get(2), from[2])).containsExactly("-1", "-", "-");
                assertThat(http.get(router.baseUrl() + "/metrics").getContentAsString())
                        .contains("kvroute_qos_engine_priority_refusing_workers 1.0");
                for (int w = 0; w < 3; w++) {
                    from[w] = workers.get(w).handler().recentBodies().size();
                }

                // batch, a tenant that may use nothing higher
                for (int i = 0; i < 3; i++) {
                    assertThat(chat(http, url, "sk-bulk", "batch", "").getStatus()).isEqualTo(200);
                }
                assertThat(priorities(workers.get(0), from[0])).containsExactly("1");
                assertThat(priorities(workers.get(1), from[1])).containsExactly("-1");
                assertThat(priorities(workers.get(2), from[2])).containsExactly("-");
                for (int w = 0; w < 3; w++) {
                    from[w] = workers.get(w).handler().recentBodies().size();
                }

                // default sends none, and a client's own priority never reaches an engine
                for (int i = 0; i < 3; i++) {
                    assertThat(chat(http, url, "sk-bulk", "interactive", ",\"priority\":-100").getStatus())
                            .as("bulk asks for interactive and claims priority -100").isEqualTo(200);
                }
                assertThat(priorities(workers.get(0), from[0])).as("clamped to batch, the claim dropped").containsExactly("1");
                assertThat(priorities(workers.get(1), from[1])).containsExactly("-1");
                for (int i = 0; i < 3; i++) {
                    assertThat(chat(http, url, "sk-chat", null, ",\"priority\":7").getStatus()).isEqualTo(200);
                }
                assertThat(priorities(workers.get(0), from[0])).containsExactly("1", "-");
                assertThat(priorities(workers.get(1), from[1])).containsExactly("-1", "-");

                // 15 requests: tenant and class (after the clamp) in every access-log line
                await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(accessLog)
                        && Files.readAllLines(accessLog).size() >= 15);
                List<String> classes = new ArrayList<>();
                for (String line : Files.readAllLines(accessLog)) {
                    JsonNode entry = JSON.readTree(line);
                    classes.add(entry.path("tenant").asText() + "/" + entry.path("priority_class").asText());
                }
                assertThat(classes.subList(0, 6)).containsOnly("chat/interactive");
                assertThat(classes.subList(6, 12)).as("bulk asking for interactive is clamped to batch")
                        .containsOnly("bulk/batch");
                assertThat(classes.subList(12, 15)).containsOnly("chat/default");
            }
        } finally {
            workers.forEach(MockWorkerMain.MockWorker::close);
        }
    }
}
