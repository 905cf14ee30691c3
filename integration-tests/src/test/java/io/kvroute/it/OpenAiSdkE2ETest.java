package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.mock.BundledTokenizer;
import io.kvroute.mock.MockWorkerMain;
import io.kvroute.router.plugin.RouterMain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The router as the official OpenAI SDK sees it: {@code node-clients/openai-sdk-check.mjs} drives npm
 * {@code openai} (6.30.1, pinned in {@code node-clients/package.json}, installed by {@code npm ci}, which
 * {@code .ci/run} runs) against three fleets: SGLang-style workers behind {@code cache_aware} with router
 * tokenization (chat {@code input_ids} forwarded), vLLM-API workers, and a prefill/decode pair whose first
 * chat is sent the moment {@code /readyz} turns 200. Each run lists models, streams a chat with
 * {@code include_usage}, sends a plain chat (with {@code temperature: null}), a completion and a streamed
 * completion, and checks that the SDK raises its own typed errors for a bad budget (400, {@code param}),
 * an unknown model (404) and a wrong key (401).
 *
 * <p>Without Node.js or the installed package the test is skipped, saying so (a machine without npm).
 */
class OpenAiSdkE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path CLIENT_DIR = Path.of("node-clients");
    private static final String KEY = "sk-openai-sdk-e2e";

    @BeforeAll
    static void nodeAndTheSdkAreInstalled() {
        Assumptions.assumeTrue(Files.isDirectory(CLIENT_DIR.resolve("node_modules/openai")),
                "npm openai is not installed: run `npm ci` in integration-tests/node-clients (.ci/run does)");
        Assumptions.assumeTrue(nodeVersion() != null, "node is not on PATH");
    }

    @Test
    void sglangStyleFleet_withRouterTokenization_servesTheSdk() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(2, List.of("--tokenizer-path", tokenizer, "--decode-ms-per-step", "1"),
                List.of("--policy", "cache_aware", "--tokenizer-path", tokenizer, "--api-key", KEY,
                        "--health-check-interval-secs", "0.2"))) {
            awaitReady(fleet.router);
            JsonNode out = runSdk(fleet.router.baseUrl());
            assertServed(out);
            // the chats went out with the router's token ids: the SDK's request took the tokenized path
            assertThat(fleet.workers.stream().flatMap(w -> w.handler().recentBodies().stream())
                    .filter(b -> b.has("messages")).allMatch(b -> b.path("input_ids").size() > 0)).isTrue();
        }
    }

    @Test
    void vllmApiFleet_servesTheSdk() throws Exception {
        String tokenizer = BundledTokenizer.qwen3().toString();
        try (TestFleet fleet = TestFleet.start(2, List.of("--engine-api", "vllm", "--tokenizer-path", tokenizer,
                "--decode-ms-per-step", "1"), List.of("--tokenizer-path", tokenizer, "--engine-type", "vllm",
                        "--api-key", KEY, "--health-check-interval-secs", "0.2"))) {
            awaitReady(fleet.router);
            assertServed(runSdk(fleet.router.baseUrl()));
        }
    }

    @Test
    void prefillDecodeRouter_servesTheSdkFromItsFirstRequestAfterReady() throws Exception {
        try (MockWorkerMain.MockWorker prefill = MockWorkerMain.start("--port", "0", "--role", "prefill");
                MockWorkerMain.MockWorker decode = MockWorkerMain.start("--port", "0", "--role", "decode")) {
            RouterMain.RunningRouter router = RouterMain.start("--port", "0", "--prefill-urls", prefill.baseUrl(),
                    "--decode-urls", decode.baseUrl(), "--api-key", KEY, "--health-check-interval-secs", "0.1");
            try {
                awaitReady(router);
                assertServed(runSdk(router.baseUrl()));
            } finally {
                router.close();
            }
        }
    }

    private static void assertServed(JsonNode out) {
        assertThat(out.path("models").isArray()).as(out.toString()).isTrue();
        assertThat(out.path("models").get(0).asText()).isEqualTo("mock-model");
        for (String call : List.of("chatStream", "completionStream")) {
            JsonNode streamed = out.path(call);
            assertThat(streamed.has("error")).as(call + ": " + streamed).isFalse();
            assertThat(streamed.path("text").asText()).as(call).isNotBlank();
            assertThat(streamed.path("finish").asText()).as(call).isIn("stop", "length");
            assertThat(streamed.path("usage").path("completion_tokens").asInt()).as(call).isBetween(1, 8);
            assertThat(streamed.path("usage").path("prompt_tokens").asInt()).as(call).isPositive();
        }
        JsonNode chat = out.path("chat");
        assertThat(chat.has("error")).as("chat: " + chat).isFalse();
        assertThat(chat.path("content").asText()).isNotBlank();
        assertThat(chat.path("usage").path("total_tokens").asInt())
                .isEqualTo(chat.path("usage").path("prompt_tokens").asInt() + chat.path("usage").path("completion_tokens").asInt());
        JsonNode completion = out.path("completion");
        assertThat(completion.has("error")).as("completion: " + completion).isFalse();
        assertThat(completion.path("text").asText()).isNotBlank();

        JsonNode bad = out.path("badRequest").path("error");
        assertThat(bad.path("name").asText()).as(out.path("badRequest").toString()).isEqualTo("BadRequestError");
        assertThat(bad.path("status").asInt()).isEqualTo(400);
        assertThat(bad.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(bad.path("param").asText()).isEqualTo("max_tokens");
        JsonNode unknown = out.path("unknownModel").path("error");
        assertThat(unknown.path("name").asText()).as(out.path("unknownModel").toString()).isEqualTo("NotFoundError");
        assertThat(unknown.path("message").asText()).contains("no-such-model");
        JsonNode wrongKey = out.path("wrongKey").path("error");
        assertThat(wrongKey.path("name").asText()).as(out.path("wrongKey").toString()).isEqualTo("AuthenticationError");
    }

    private static void awaitReady(RouterMain.RunningRouter router) {
        try (Http http = new Http()) {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> http.get(router.baseUrl() + "/readyz").getStatus() == 200);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode runSdk(String baseUrl) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("node", "openai-sdk-check.mjs", baseUrl));
        ProcessBuilder builder = new ProcessBuilder(command).directory(CLIENT_DIR.toFile()).redirectErrorStream(false);
        builder.environment().put("KVROUTE_API_KEY", KEY);
        Process process = builder.start();
        byte[] stdout = process.getInputStream().readAllBytes();
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the SDK run ends").isTrue();
        assertThat(process.exitValue()).as(stderr).isZero();
        return JSON.readTree(stdout);
    }

    private static String nodeVersion() {
        try {
            Process process = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            String version = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0 ? version : null;
        } catch (IOException | InterruptedException e) {
            return null;
        }
    }
}
