package io.kvroute.router.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.LoopbackServer;
import io.kvroute.router.plugin.RouterMain;
import io.kvroute.router.tenant.TenantDirectory;
import io.kvroute.router.tokenize.TokenizerArchive;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The request body is parsed exactly once per request ({@link RequestJson#parse}) on every ingress path:
 * a plain completion, a chat the router tokenizes and forwards {@code input_ids} for, a chat with the
 * caller's ids, a request the validation rejects, a tenant (QoS) request and a prefill/decode request.
 * Real Jetty on loopback: three routers (token-hungry policy with the real Qwen3 tokenizer, tenants, PD)
 * in front of stub workers that record the bodies they receive.
 */
class OneParsePerRequestTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TENANT_KEY = "sk-parse-once";

    @TempDir
    static Path tmp;

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final List<String> RECEIVED = new CopyOnWriteArrayList<>();
    private static final List<Server> WORKERS = new ArrayList<>();
    private static final List<RouterMain.RunningRouter> ROUTERS = new ArrayList<>();
    private static RouterMain.RunningRouter tokenizing;
    private static RouterMain.RunningRouter tenants;
    private static RouterMain.RunningRouter pd;

    @BeforeAll
    static void start() throws Exception {
        Path qwen = TokenizerArchive.materialize(OneParsePerRequestTest.class.getClassLoader(), "models/qwen3",
                Files.createDirectories(tmp.resolve("qwen3")));
        String worker = url(stubWorker());
        tokenizing = router("--worker-urls", worker, "--model-ids", "m,plain", "--policy", "cache_aware",
                "--tokenizer-path", "m=" + qwen);
        Path tenantsFile = tmp.resolve("tenants.yaml");
        Files.writeString(tenantsFile, "tenants:\n  - {name: t, api_key_sha256: " + TenantDirectory.sha256Hex(TENANT_KEY) + "}\n");
        tenants = router("--worker-urls", worker, "--model-ids", "m", "--tenants-file", tenantsFile.toString());
        pd = router("--prefill-urls", url(stubWorker()) + "=8998", "--decode-urls", url(stubWorker()), "--model-ids", "m",
                "--tokenizer-path", "m=" + qwen);
        for (RouterMain.RunningRouter r : ROUTERS) {
            await().atMost(Duration.ofSeconds(20)).until(() -> get(r, "/readyz").statusCode() == 200);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (RouterMain.RunningRouter r : ROUTERS) {
            r.close();
        }
        for (Server w : WORKERS) {
            w.stop();
        }
    }

    @Test
    void plainCompletion_isParsedOnce() throws Exception {
        assertParsedOnce(tokenizing, "/v1/completions", "{\"model\":\"plain\",\"prompt\":\"hello\",\"max_tokens\":1}", null, 200);
    }

    @Test
    void chatTheRouterTokenizes_isParsedOnce_andForwardsInputIds() throws Exception {
        RECEIVED.clear();
        assertParsedOnce(tokenizing, "/v1/chat/completions",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":1}", null, 200);
        assertThat(RECEIVED).hasSize(1);
        assertThat(JSON.readTree(RECEIVED.get(0)).path("input_ids").size()).isPositive();
    }

    @Test
    void chatWithTheCallersIds_isParsedOnce() throws Exception {
        assertParsedOnce(tokenizing, "/v1/chat/completions", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"hi\"}],\"input_ids\":[1,2,3],\"max_tokens\":1}", null, 200);
    }

    @Test
    void requestsTheValidationRejects_areParsedOnce() throws Exception {
        assertParsedOnce(tokenizing, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":-1}", null, 400);
        assertParsedOnce(tokenizing, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hi\"} trailing", null, 400);
        assertParsedOnce(tokenizing, "/v1/completions",
                "{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":123456789012345678901234567890}", null, 400);
    }

    @Test
    void sanitizedRequest_isParsedOnce_andForwardsTheSanitizedBody() throws Exception {
        RECEIVED.clear();
        assertParsedOnce(tokenizing, "/v1/completions",
                "{\"model\":\"plain\",\"prompt\":\"hi\",\"segment_index\":3,\"input_ids\":null,\"max_tokens\":1}", null, 200);
        JsonNode forwarded = JSON.readTree(RECEIVED.get(0));
        assertThat(forwarded.has("segment_index")).isFalse();
        assertThat(forwarded.has("input_ids")).isFalse();
    }

    @Test
    void tenantRequest_isParsedOnce() throws Exception {
        assertParsedOnce(tenants, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hello\",\"max_tokens\":1}", TENANT_KEY, 200);
    }

    @Test
    void prefillDecodeRequest_isParsedOnce() throws Exception {
        RECEIVED.clear();
        assertParsedOnce(pd, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hello\",\"max_tokens\":1}", null, 200);
        // the same rewritten tree went to the prefill and the decode worker, with the bootstrap rendezvous
        await().atMost(Duration.ofSeconds(10)).until(() -> RECEIVED.size() == 2);
        assertThat(RECEIVED).allSatisfy(b -> assertThat(JSON.readTree(b).path("bootstrap_port").asInt()).isEqualTo(8998));
    }

    /**
     * A chat on the PD path that the router tokenizes: parsed once, and both workers get the rewritten tree with
     * the router's {@code input_ids}, the same ids the single-pool router forwards for the same chat.
     */
    @Test
    void prefillDecodeChatTheRouterTokenizes_isParsedOnce_andBothWorkersGetTheIds() throws Exception {
        String chat = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there, both\"}],"
                + "\"max_tokens\":1}";
        RECEIVED.clear();
        assertParsedOnce(tokenizing, "/v1/chat/completions", chat, null, 200);
        JsonNode expected = JSON.readTree(RECEIVED.get(0)).path("input_ids");
        assertThat(expected.size()).isPositive();
        RECEIVED.clear();
        assertParsedOnce(pd, "/v1/chat/completions", chat, null, 200);
        await().atMost(Duration.ofSeconds(10)).until(() -> RECEIVED.size() == 2);
        assertThat(RECEIVED).allSatisfy(b -> {
            JsonNode forwarded = JSON.readTree(b);
            assertThat(forwarded.path("input_ids")).isEqualTo(expected);
            assertThat(forwarded.path("messages").size()).isEqualTo(1);
        });
    }

    /**
     * The counter sees only {@link RequestJson#parse}: a parse through another mapper would slip past it, so
     * no other class on the inference request's way in, this package and the two adapters over it, may parse
     * JSON (the Jetty adapter's admin API and adapter loader parse their own, non-inference inputs).
     */
    @Test
    void noOtherIngressClass_parsesJson() throws Exception {
        Path router = Path.of("src/main/java/io/kvroute/router");
        List<String> allowed = List.of("ingress/RequestJson.java", "http/AdminRoutes.java", "http/JettyAdapterLoader.java");
        List<String> scanned = new ArrayList<>();
        List<String> parsing = new ArrayList<>();
        for (String dir : List.of("ingress", "http", "servlet")) {
            try (var files = Files.list(router.resolve(dir))) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    String name = dir + "/" + file.getFileName();
                    String text = Files.readString(file);
                    scanned.add(name);
                    if (!allowed.contains(name)
                            && (text.contains("readTree(") || text.contains("createParser(") || text.contains("readValue("))) {
                        parsing.add(name);
                    }
                }
            }
        }
        assertThat(scanned).contains("ingress/InferenceFrontDoor.java", "http/RouterHandler.java",
                "servlet/RouterServlet.java").containsAll(allowed);
        assertThat(parsing).isEmpty();
    }

    private static void assertParsedOnce(RouterMain.RunningRouter router, String path, String body, String apiKey,
            int status) throws Exception {
        long before = RequestJson.PARSES.sum();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(router.baseUrl() + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        // the tests of this class run one at a time and nothing else in this JVM parses request bodies meanwhile
        assertThat(RequestJson.PARSES.sum() - before).as("parses of " + body).isEqualTo(1);
    }

    private static RouterMain.RunningRouter router(String... args) throws Exception {
        String[] all = new String[args.length + 4];
        all[0] = "--port";
        all[1] = "0";
        all[2] = "--load-source";
        all[3] = "none";
        System.arraycopy(args, 0, all, 4, args.length);
        RouterMain.RunningRouter r = RouterMain.start(all);
        ROUTERS.add(r);
        return r;
    }

    private static HttpResponse<String> get(RouterMain.RunningRouter router, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(router.baseUrl() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Answers any /v1/ call with a one-token completion (chat or text shape) and records the body. */
    private static Server stubWorker() throws Exception {
        Server server = LoopbackServer.start(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = Request.getPathInContext(request);
                String answer = "{}";
                if (path.startsWith("/v1/") && !path.equals("/v1/models")) {
                    RECEIVED.add(Content.Source.asString(request, StandardCharsets.UTF_8));
                    answer = path.contains("chat")
                            ? "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                                    + "\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
                                    + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}"
                            : "{\"id\":\"c\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                                    + "\"text\":\"hi\",\"finish_reason\":\"stop\"}],"
                                    + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}";
                }
                response.setStatus(200);
                response.getHeaders().put("Content-Type", "application/json");
                response.write(true, ByteBuffer.wrap(answer.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        WORKERS.add(server);
        return server;
    }

    private static String url(Server server) {
        return LoopbackServer.url(server);
    }
}
