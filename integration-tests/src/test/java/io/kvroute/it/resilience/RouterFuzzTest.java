package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Thousands of generated malformed requests against every router endpoint: each must get a 4xx
 * OpenAI-style JSON error from the router itself (none may reach a worker), and the router must
 * stay healthy and keep serving good requests.
 */
class RouterFuzzTest {

    private static final int MAX_BODY_BYTES = 32 * 1024;
    private static final String ADMIN_KEY = "fuzz-admin";
    private static final List<String> READ_ONLY = List.of("/healthz", "/readyz", "/metrics", "/v1/models");

    @Test
    void malformedRequests_allGetOpenAi4xx_neverReachAWorker_andTheRouterStaysHealthy() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), List.of("--max-body-bytes", String.valueOf(MAX_BODY_BYTES),
                "--admin-api-key", ADMIN_KEY, "--health-check-interval-secs", "0.5"));
                Client client = new Client(30)) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> client.get(fleet.url("/v1/models")).body().contains("mock-model"));
            MalformedRequests gen = new MalformedRequests(new SplittableRandom(20261130L));
            List<Supplier<MalformedRequests.Case>> generators = List.of(gen::truncated, gen::wrongType, gen::absurdBudget,
                    gen::hugeNumber, gen::deepNesting, gen::invalidUtf8, gen::wrongContentType, gen::notAnObject,
                    () -> gen.wrongMethod(READ_ONLY), () -> gen.oversized(MAX_BODY_BYTES), RouterFuzzTest::unknownModel,
                    () -> adminWithoutToken(gen), RouterFuzzTest::unknownPath);
            int total = 3_000;
            List<String> failures = new ArrayList<>();
            List<MalformedRequests.Case> batchCases = new ArrayList<>();
            List<CompletableFuture<Client.Reply>> batch = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                MalformedRequests.Case c = generators.get(i % generators.size()).get();
                batchCases.add(c);
                batch.add(client.send(c.method(), fleet.url(c.path()), c.contentType(), c.body()));
                if (batch.size() == 32 || i == total - 1) {
                    check(batchCases, batch, failures);
                    batchCases.clear();
                    batch.clear();
                }
            }
            assertThat(failures).as("%d of %d requests were not answered with an OpenAI-style 4xx", failures.size(), total)
                    .isEmpty();
            assertThat(fleet.mocks.get(0).handler().requests()).as("no malformed request reached the worker").isZero();

            List<String> raw = rawHttpFailures(fleet.router.baseUrl());
            assertThat(raw).as("malformed HTTP at the protocol level").isEmpty();

            assertThat(client.get(fleet.url("/healthz")).status()).isEqualTo(200);
            assertThat(client.get(fleet.url("/readyz")).status()).isEqualTo(200);
            Client.Reply good = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 2));
            assertThat(good.status()).isEqualTo(200);
            // the router releases its accounting just after the last byte went out, so wait for it
            await().atMost(Duration.ofSeconds(5)).until(() -> fleet.router.router().activeRequests() == 0
                    && fleet.routerInFlight() == 0);
        }
    }

    private static void check(List<MalformedRequests.Case> cases, List<CompletableFuture<Client.Reply>> replies,
            List<String> failures) {
        for (int i = 0; i < cases.size(); i++) {
            MalformedRequests.Case c = cases.get(i);
            try {
                Client.Reply reply = replies.get(i).get(40, TimeUnit.SECONDS);
                if (reply.status() < 400 || reply.status() > 499 || !reply.isOpenAiError()) {
                    failures.add(reply.status() + " " + reply.body() + " <- " + c.describe());
                }
            } catch (Exception e) {
                failures.add("no reply (" + e + ") <- " + c.describe());
            }
        }
    }

    private static MalformedRequests.Case unknownModel() {
        return new MalformedRequests.Case("unknown-model", "POST", MalformedRequests.CHAT, "application/json",
                "{\"model\":\"gpt-9000\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}".getBytes(StandardCharsets.UTF_8));
    }

    private static MalformedRequests.Case adminWithoutToken(MalformedRequests gen) {
        MalformedRequests.Case body = gen.truncated();
        String[] paths = {"/workers", "/workers/abc", "/workers/abc/drain"};
        String[] methods = {"GET", "POST", "DELETE"};
        return new MalformedRequests.Case("admin-no-token", methods[body.body().length % 3], paths[body.body().length % 3 == 0 ? 0
                : (body.body().length / 3) % 3], "application/json", body.body());
    }

    private static int unknownPathCounter;

    private static MalformedRequests.Case unknownPath() {
        String[] paths = {"/v1/chat", "/v1/chat/completions/x", "/v2/completions", "/generate/", "/admin", "/v1/models/x",
            "/workers_x", "/%7Bjunk%7D", "/v1/embeddings"};
        return new MalformedRequests.Case("unknown-path", "POST", paths[unknownPathCounter++ % paths.length], "application/json",
                "{}".getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Requests that are broken below JSON: invalid UTF-8 and control bytes in the path, a bad
     * request line, an unknown HTTP version (505, as RFC 9110 says), an oversized header. Jetty
     * rejects them; the answer must still be a 4xx with a JSON body, never HTML.
     */
    private static List<String> rawHttpFailures(String baseUrl) throws Exception {
        int port = Integer.parseInt(baseUrl.substring(baseUrl.lastIndexOf(':') + 1));
        List<byte[]> requests = List.of(
                ascii("GET /v1/models\u00ff\u00fe HTTP/1.1\r\nHost: x\r\n\r\n", true),
                ascii("GET /%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false),
                ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}", false),
                ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", false),
                ascii("GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n", false),
                ascii("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(64 * 1024) + "\r\n\r\n", false),
                ascii("GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n", false));
        List<String> failures = new ArrayList<>();
        for (byte[] request : requests) {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write(request);
                out.flush();
                String answer = readAll(socket.getInputStream());
                String head = new String(request, 0, Math.min(40, request.length), StandardCharsets.ISO_8859_1);
                String statusLine = answer.lines().findFirst().orElse("");
                // an unknown HTTP version is answered 505 by RFC 9110; everything else is the client's 4xx
                boolean fourXx = statusLine.matches("HTTP/1\\.[01] 4\\d\\d.*")
                        || head.contains("HTTP/9.9") && statusLine.startsWith("HTTP/1.1 505");
                boolean json = answer.contains("\r\n\r\n{\"error\"") || answer.toLowerCase().contains("content-length: 0");
                if (!fourXx || !json) {
                    failures.add(head + " -> " + answer.substring(0, Math.min(300, answer.length())));
                }
            }
        }
        return failures;
    }

    private static byte[] ascii(String text, boolean latin1) {
        return text.getBytes(latin1 ? StandardCharsets.ISO_8859_1 : StandardCharsets.US_ASCII);
    }

    private static String readAll(InputStream in) throws Exception {
        StringBuilder out = new StringBuilder();
        byte[] buffer = new byte[8192];
        try {
            int n;
            while ((n = in.read(buffer)) > 0) {
                out.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                if (out.indexOf("\r\n\r\n") > 0 && out.indexOf("}}") > 0) {
                    break;
                }
            }
        } catch (java.net.SocketException | java.net.SocketTimeoutException e) {
            // the server closed the connection after its answer
        }
        return out.toString();
    }
}
