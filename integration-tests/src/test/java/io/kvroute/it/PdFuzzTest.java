package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Random valid and invalid bodies against the PD router (a real prefill and a real decode mock
 * worker in process): JSON null for every optional field, out-of-range numbers (n, max_tokens,
 * temperature, huge ints), wrong types and nested junk. Every request must get an answer within
 * its timeout, either a 200 or a 4xx OpenAI-style JSON error, never a 5xx; /healthz stays OK and
 * the heap stays bounded. A fixed seed, a few seconds of runtime.
 */
class PdFuzzTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEED = 20261201L;
    private static final int REQUESTS = 600;

    /** Values for any optional field: null, out-of-range and huge numbers, wrong types, nested junk. */
    private static final List<String> JUNK = List.of("null", "0", "-1", "1", "2", "3", "129", "2000000000", "-2147483649",
            "9223372036854775807", "99999999999999999999999999", "1e300", "-1e300", "1.5", "true", "false", "\"x\"", "\"\"",
            "[]", "{}", "[null]", "{\"a\":[[[{\"b\":null}]]]}", "[[[[[[[[1]]]]]]]]", "\"\\ud800\"");

    private static final Map<String, List<String>> FIELDS = Map.of(
            "/v1/chat/completions", List.of("model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
                    "temperature", "top_p", "stop", "seed", "add_generation_prompt", "continue_final_message",
                    "chat_template_kwargs", "input_ids", "segment_index", "high_priority_request", "logprobs", "user"),
            "/v1/completions", List.of("model", "stream", "stream_options", "n", "max_tokens", "temperature", "stop", "echo",
                    "input_ids", "best_of"),
            "/generate", List.of("model", "stream", "stream_options", "n", "sampling_params", "input_ids", "return_logprob",
                    "bootstrap_room", "rid"));

    private static String base(String path, SplittableRandom random) {
        String prompt = random.nextInt(4) == 0 ? "[\"array prompt\"]" : "\"fuzz prompt " + random.nextInt(1000) + "\"";
        return switch (path) {
            case "/v1/chat/completions" -> "\"messages\":[{\"role\":\"user\",\"content\":" + (random.nextInt(6) == 0 ? "null" : "\"hi\"")
                    + "}],\"max_tokens\":" + (1 + random.nextInt(4));
            case "/v1/completions" -> "\"prompt\":" + prompt + ",\"max_tokens\":" + (1 + random.nextInt(4));
            default -> "\"text\":" + prompt + ",\"sampling_params\":{\"max_new_tokens\":" + (1 + random.nextInt(4)) + "}";
        };
    }

    private static String body(SplittableRandom random) {
        List<String> paths = List.copyOf(FIELDS.keySet());
        String path = paths.get(random.nextInt(paths.size()));
        StringBuilder body = new StringBuilder("{").append(base(path, random));
        if (random.nextBoolean()) {
            body.append(",\"stream\":true");
        }
        List<String> fields = new ArrayList<>(FIELDS.get(path));
        fields.remove("stream");
        int mutations = random.nextInt(4);
        for (int i = 0; i < mutations && !fields.isEmpty(); i++) {
            String field = fields.remove(random.nextInt(fields.size()));
            String value = JUNK.get(random.nextInt(JUNK.size()));
            if (field.equals("max_tokens") || field.equals("max_completion_tokens")) {
                // keep valid budgets small so the mock answers fast; out-of-range ones must be 400s
                value = random.nextBoolean() ? String.valueOf(random.nextInt(5)) : value;
            }
            body.append(",\"").append(field).append("\":").append(value);
        }
        return path + " " + body.append('}');
    }

    private static long usedHeapAfterGc(MemoryMXBean memory) {
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    @Test
    void randomBodies_allGetA200OrA4xxJson_noneA5xx_andTheRouterStaysHealthy() throws Exception {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        List<String> fast = List.of("--decode-ms-per-step", "1", "--prefill-ms-per-1k", "1");
        try (PdFleet fleet = PdFleet.start(1, 1, fast, fast, List.of()); Http http = new Http()) {
            long heapBefore = usedHeapAfterGc(memory);
            SplittableRandom random = new SplittableRandom(SEED);
            // first every optional field as JSON null, streaming and not; then random mutations
            List<String> requests = new ArrayList<>();
            for (var entry : FIELDS.entrySet()) {
                for (String field : entry.getValue()) {
                    for (String stream : List.of("true", "false")) {
                        String fixed = "{" + base(entry.getKey(), random) + ",\"" + field + "\":null"
                                + (field.equals("stream") ? "" : ",\"stream\":" + stream) + "}";
                        requests.add(entry.getKey() + " " + fixed);
                    }
                }
            }
            while (requests.size() < REQUESTS) {
                requests.add(body(random));
            }
            List<String> failures = new ArrayList<>();
            int ok = 0;
            int rejected = 0;
            for (int start = 0; start < REQUESTS; start += 16) {
                List<String> sent = new ArrayList<>();
                List<CompletableFuture<Http.Reply>> replies = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    if (start + i >= requests.size()) {
                        break;
                    }
                    String request = requests.get(start + i);
                    int space = request.indexOf(' ');
                    sent.add(request);
                    replies.add(http.stream(fleet.url(request.substring(0, space)), request.substring(space + 1)));
                }
                for (int i = 0; i < replies.size(); i++) {
                    Http.Reply reply;
                    try {
                        reply = replies.get(i).get(20, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        failures.add("no answer (" + e + "): " + sent.get(i));
                        continue;
                    }
                    if (reply.status() == 200) {
                        ok++;
                        if (reply.body().contains("\"error\"") && reply.body().contains("\"code\":5")) {
                            failures.add("5xx error event in a 200: " + sent.get(i) + " -> " + reply.body());
                        }
                    } else if (reply.status() >= 400 && reply.status() < 500) {
                        rejected++;
                        JsonNode error = JSON.readTree(reply.body()).path("error");
                        if (!error.path("message").isTextual() || !error.path("type").isTextual()) {
                            failures.add("4xx without an OpenAI error body: " + sent.get(i) + " -> " + reply.body());
                        }
                    } else {
                        failures.add(reply.status() + ": " + sent.get(i) + " -> " + reply.body());
                    }
                }
            }
            assertThat(failures).as("%d ok, %d rejected", ok, rejected).isEmpty();
            assertThat(ok).as("the generator also sends valid bodies").isGreaterThan(REQUESTS / 10);
            assertThat(rejected).as("...and invalid ones").isGreaterThan(REQUESTS / 10);
            assertThat(http.get(fleet.url("/healthz")).getStatus()).isEqualTo(200);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> fleet.router.router().activeRequests() == 0);
            long heapGrowthBytes = usedHeapAfterGc(memory) - heapBefore;
            assertThat(heapGrowthBytes).as("heap growth over the run").isLessThan(256L << 20);
        }
    }
}
