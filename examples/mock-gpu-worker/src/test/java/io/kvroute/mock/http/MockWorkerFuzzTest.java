package io.kvroute.mock.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.MockWorkerMain;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Generated malformed requests against every mock worker endpoint: each must get a 4xx
 * OpenAI-style JSON error, and the worker must keep serving. The corpus holds only what the mock
 * itself must reject (it is lenient about fields it does not read).
 */
class MockWorkerFuzzTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> GENERATION = List.of("/v1/chat/completions", "/v1/completions", "/generate");
    private static final List<String> READ_ONLY = List.of("/health", "/server_info", "/get_server_info", "/v1/models",
            "/scheduler", "/debug/requests");
    private static MockWorkerMain.MockWorker worker;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "1");
        client = new HttpClient();
        client.setMaxConnectionsPerDestination(64);
        client.start();
    }

    @AfterAll
    static void stop() throws Exception {
        client.stop();
        worker.close();
    }

    private record Case(String method, String path, String contentType, byte[] body) {
        String describe() {
            return method + " " + path + " " + (body == null ? "" : new String(body, 0, Math.min(160, body.length),
                    StandardCharsets.UTF_8));
        }
    }

    private static Case post(String path, String body) {
        return new Case("POST", path, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    private static String valid(String path, String extra) {
        String sep = extra.isEmpty() ? "" : ",";
        return switch (path) {
            case "/v1/chat/completions" -> "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2" + sep + extra + "}";
            case "/v1/completions" -> "{\"prompt\":\"once\",\"max_tokens\":2" + sep + extra + "}";
            default -> "{\"text\":\"hello\",\"sampling_params\":{\"max_new_tokens\":2}" + sep + extra + "}";
        };
    }

    /** Token budgets the mock must refuse, including int-sized ones it cannot possibly allocate. */
    private static final List<String> ABSURD_BUDGETS = List.of("-1", "-2147483648", "2147483647", "2147483648", "1000000000",
            "99999999999999999999", "1e300", "\"16\"", "true", "[]", "{}");

    private static List<Case> corpus(SplittableRandom random, int count) {
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String path = GENERATION.get(random.nextInt(GENERATION.size()));
            switch (i % 10) {
                case 0 -> {
                    String body = valid(path, "");
                    cases.add(post(path, body.substring(0, random.nextInt(body.length()))));
                }
                case 1 -> {
                    String[] bodies = {"", "null", "[]", "42", "\"x\"", "{'a':1}", "{\"a\":1,}", "<x/>"};
                    cases.add(post(path, bodies[random.nextInt(bodies.length)]));
                }
                case 2 -> {
                    String[] chat = {"{\"messages\":\"x\"}", "{\"messages\":1}", "{\"messages\":{}}", "{\"messages\":[]}",
                        "{\"messages\":null}", "{}"};
                    String[] prompt = {"{\"prompt\":1}", "{\"prompt\":{}}", "{\"prompt\":true}", "{\"prompt\":null}", "{}",
                        "{\"input_ids\":\"1 2\"}", "{\"input_ids\":[\"a\"]}", "{\"input_ids\":[1e20]}", "{\"input_ids\":[]}"};
                    String[] generate = {"{\"text\":1}", "{\"text\":{}}", "{\"text\":null}", "{}", "{\"input_ids\":5}",
                        "{\"input_ids\":{}}"};
                    String[] pool = path.endsWith("chat/completions") ? chat : path.equals("/generate") ? generate : prompt;
                    cases.add(post(path, pool[random.nextInt(pool.length)]));
                }
                case 3 -> {
                    String budget = ABSURD_BUDGETS.get(random.nextInt(ABSURD_BUDGETS.size()));
                    cases.add(post(path, path.equals("/generate")
                            ? "{\"text\":\"x\",\"sampling_params\":{\"max_new_tokens\":" + budget + "}}"
                            : valid(path, "\"max_completion_tokens\":null").replace("\"max_tokens\":2", "\"max_tokens\":" + budget)));
                }
                case 4 -> cases.add(post(path, valid(path, "\"seed\":" + "9".repeat(1_001 + random.nextInt(5_000)))));
                case 5 -> {
                    int depth = 1_001 + random.nextInt(3_000);
                    cases.add(post(path, valid(path, "\"x\":" + "[".repeat(depth) + "]".repeat(depth))));
                }
                case 6 -> {
                    byte[][] bad = {{(byte) 0x80}, {(byte) 0xFF}, {(byte) 0xC3, 'A'}, {(byte) 0xFE}};
                    String body = valid(path, "\"user\":\"abc\"");
                    int at = body.indexOf("abc") + 1;
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    out.writeBytes(body.substring(0, at).getBytes(StandardCharsets.UTF_8));
                    out.writeBytes(bad[random.nextInt(bad.length)]);
                    out.writeBytes(body.substring(at).getBytes(StandardCharsets.UTF_8));
                    cases.add(new Case("POST", path, "application/json", out.toByteArray()));
                }
                case 7 -> cases.add(post(path, valid(path, "\"infer_high_priority\":true")));
                case 8 -> {
                    String[] methods = {"GET", "PUT", "DELETE", "PATCH"};
                    cases.add(new Case(methods[random.nextInt(methods.length)], path, null, null));
                }
                default -> {
                    String[] methods = {"POST", "PUT", "DELETE", "PATCH"};
                    cases.add(new Case(methods[random.nextInt(methods.length)], READ_ONLY.get(random.nextInt(READ_ONLY.size())),
                            "application/json", "{}".getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
        return cases;
    }

    @Test
    void malformedRequests_allGetOpenAi4xx_andTheWorkerKeepsServing() throws Exception {
        List<Case> cases = corpus(new SplittableRandom(42), 1_500);
        cases.add(new Case("GET", "/no/such/path", null, null));
        List<String> failures = new ArrayList<>();
        for (int start = 0; start < cases.size(); start += 32) {
            List<Case> batch = cases.subList(start, Math.min(cases.size(), start + 32));
            List<CompletableFuture<Reply>> replies = new ArrayList<>();
            for (Case c : batch) {
                replies.add(send(c));
            }
            for (int i = 0; i < batch.size(); i++) {
                try {
                    Reply reply = replies.get(i).get(20, TimeUnit.SECONDS);
                    if (reply.status() < 400 || reply.status() > 499 || !isOpenAiError(reply)) {
                        failures.add(reply.status() + " " + reply.body() + " <- " + batch.get(i).describe());
                    }
                } catch (Exception e) {
                    failures.add("no reply (" + e + ") <- " + batch.get(i).describe());
                }
            }
        }
        assertThat(failures).as("%d of %d requests were not answered with an OpenAI-style 4xx", failures.size(), cases.size())
                .isEmpty();
        assertThat(client.newRequest(worker.baseUrl() + "/health").timeout(10, TimeUnit.SECONDS).send().getStatus())
                .isEqualTo(200);
        Reply good = send(post("/v1/chat/completions", valid("/v1/chat/completions", ""))).get(30, TimeUnit.SECONDS);
        assertThat(good.status()).isEqualTo(200);
        assertThat(JSON.readTree(good.body()).path("usage").path("completion_tokens").asInt()).isEqualTo(2);
    }

    @Test
    void oversizedBody_is413() throws Exception {
        byte[] huge = new byte[(64 << 20) + 1024];
        java.util.Arrays.fill(huge, (byte) ' ');
        huge[0] = '{';
        huge[huge.length - 1] = '}';
        Reply reply = send(new Case("POST", "/generate", "application/json", huge)).get(20, TimeUnit.SECONDS);
        assertThat(reply.status()).isEqualTo(413);
        assertThat(isOpenAiError(reply)).isTrue();
    }

    /** A finished exchange. */
    private record Reply(int status, String contentType, String body) {}

    private static CompletableFuture<Reply> send(Case c) {
        Request request = client.newRequest(worker.baseUrl() + c.path()).method(c.method()).timeout(15, TimeUnit.SECONDS);
        if (c.body() != null) {
            request.body(new BytesRequestContent(c.contentType(), c.body()));
        }
        CompletableFuture<Reply> done = new CompletableFuture<>();
        request.send(new org.eclipse.jetty.client.BufferingResponseListener(8 << 20) {
            @Override
            public void onComplete(org.eclipse.jetty.client.Result result) {
                if (result.getResponse() == null || result.getResponse().getStatus() == 0) {
                    done.completeExceptionally(result.getFailure());
                } else {
                    done.complete(new Reply(result.getResponse().getStatus(),
                            result.getResponse().getHeaders().get("content-type"), getContentAsString(StandardCharsets.UTF_8)));
                }
            }
        });
        return done;
    }

    private static boolean isOpenAiError(Reply reply) {
        String type = reply.contentType();
        if (type == null || !type.startsWith("application/json")) {
            return false;
        }
        try {
            JsonNode error = JSON.readTree(reply.body()).path("error");
            return !error.path("message").asText("").isBlank() && !error.path("type").asText("").isBlank()
                    && error.path("code").asInt() == reply.status();
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
