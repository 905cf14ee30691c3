package io.kvroute.it.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.mock.MockWorkerMain;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The admin API end to end (status codes, URL validation, add/drain/delete flowing into routing)
 * and the optional inference API key.
 */
class AdminApiTest {

    private static final String KEY = "s3cret-admin-key";
    private static final String[] AUTH = {"Authorization", "Bearer " + KEY};
    private static Client client;

    @BeforeAll
    static void startClient() throws Exception {
        client = new Client(30);
    }

    @AfterAll
    static void stopClient() throws Exception {
        client.close();
    }

    private static List<String> routerArgs(String... more) {
        List<String> args = new ArrayList<>(List.of("--policy", "round_robin", "--health-check-interval-secs", "0.3",
                "--health-failure-threshold", "1", "--admin-api-key", KEY));
        args.addAll(List.of(more));
        return args;
    }

    @Test
    void adminApi_isAbsentWithoutAKey() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), List.of())) {
            for (String method : List.of("GET", "POST")) {
                Client.Reply reply = client.request(method, fleet.url("/workers"), method.equals("POST") ? "{}" : null, AUTH);
                assertThat(reply.status()).isEqualTo(404);
                assertThat(reply.isOpenAiError()).isTrue();
            }
            assertThat(client.request("DELETE", fleet.url("/workers/abc"), null).status()).isEqualTo(404);
        }
    }

    @Test
    void wrongOrAbsentToken_is401_onEveryAdminRoute() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), routerArgs())) {
            List<String[]> badHeaders = List.of(new String[0], new String[] {"Authorization", "Bearer wrong"},
                    new String[] {"Authorization", "Bearer " + KEY.toUpperCase()},
                    new String[] {"Authorization", "Bearer " + KEY + "x"}, new String[] {"Authorization", "Bearer"},
                    new String[] {"Authorization", "Basic " + KEY}, new String[] {"Authorization", KEY});
            for (String[] headers : badHeaders) {
                for (String[] call : List.of(new String[] {"GET", "/workers"}, new String[] {"POST", "/workers"},
                        new String[] {"DELETE", "/workers/x"}, new String[] {"POST", "/workers/x/drain"})) {
                    Client.Reply reply = client.request(call[0], fleet.url(call[1]), call[0].equals("POST") ? "{}" : null, headers);
                    assertThat(reply.status()).as(String.join(" ", call) + " " + String.join(":", headers)).isEqualTo(401);
                    assertThat(reply.isOpenAiError()).isTrue();
                    assertThat(reply.header("www-authenticate")).isEqualTo("Bearer");
                    assertThat(reply.body()).doesNotContain(KEY);
                }
            }
            assertThat(fleet.router.router().workers().fleet().all()).hasSize(1);
            assertThat(fleet.router.router().config().toString()).as("the key is never printed").doesNotContain(KEY);
        }
    }

    @Test
    void postWorkers_rejectsEveryNonHttpUrl_withoutEverContactingIt() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), routerArgs());
                ScriptedWorker canary = ScriptedWorker.start(ScriptedWorker.Script.OK)) {
            String hostPort = canary.baseUrl().substring("http://".length());
            List<String> bodies = List.of(
                    "{\"url\":\"file:///etc/passwd\"}", "{\"url\":\"http://\"}", "{\"url\":\"https://\"}",
                    "{\"url\":\"gopher://" + hostPort + "/_GET\"}", "{\"url\":\"ftp://" + hostPort + "\"}",
                    "{\"url\":\"jar:http://" + hostPort + "/x!/\"}", "{\"url\":\"//" + hostPort + "\"}",
                    "{\"url\":\"" + hostPort + "\"}", "{\"url\":\"http:///etc/passwd\"}",
                    "{\"url\":\"http://user:pw@" + hostPort + "\"}", "{\"url\":\"http://" + hostPort + "/?q=1\"}",
                    "{\"url\":\"http://exa mple.com\"}", "{\"url\":\"\"}", "{\"url\":42}", "{\"url\":null}", "{}", "[]",
                    "not json", "{\"url\":\"" + canary.baseUrl() + "\",\"role\":\"boss\"}",
                    "{\"url\":\"" + canary.baseUrl() + "\",\"bootstrap_port\":70000}",
                    "{\"url\":\"" + canary.baseUrl() + "\",\"load_endpoint\":\"file:///etc/passwd\"}",
                    "{\"url\":\"" + canary.baseUrl() + "\",\"kv_events_template\":\"endpoint=tcp://*:5557\"}",
                    "{\"url\":\"" + canary.baseUrl() + "\",\"kv_events_template\":42}");
            for (String body : bodies) {
                Client.Reply reply = client.postJson(fleet.url("/workers"), body, AUTH);
                assertThat(reply.status()).as(body + " -> " + reply.body()).isEqualTo(400);
                assertThat(reply.isOpenAiError()).isTrue();
            }
            Thread.sleep(700); // two health intervals: a registered bad URL would have been probed by now
            assertThat(canary.anyRequests()).as("nothing fetched a rejected URL").isZero();
            assertThat(fleet.router.router().workers().fleet().all()).hasSize(1);
        }
    }

    /** An engine without /server_info (vLLM) added with its KV-event template: the worker carries the endpoints. */
    @Test
    void postWorkers_kvEventsTemplate_givesTheWorkerItsKvEventEndpoints() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), routerArgs());
                ScriptedWorker added = ScriptedWorker.start(ScriptedWorker.Script.OK)) {
            Client.Reply created = client.postJson(fleet.url("/workers"), "{\"url\":\"" + added.baseUrl()
                    + "\",\"kv_events_template\":\"endpoint=tcp://*:45557;replay-endpoint=tcp://*:45600;block-size=16;"
                    + "dp-size=2\"}", AUTH);
            assertThat(created.status()).as(created.body()).isEqualTo(201);
            io.kvroute.router.worker.Worker w = fleet.router.router().workers().fleet().all().stream()
                    .filter(x -> x.url().equals(added.baseUrl())).findFirst().orElseThrow();
            assertThat(w.kvEvents().eventEndpoints(w.host())).containsExactly("tcp://127.0.0.1:45557", "tcp://127.0.0.1:45558");
            assertThat(w.kvEvents().replayEndpoints(w.host())).containsExactly("tcp://127.0.0.1:45600", "tcp://127.0.0.1:45601");
        }
    }

    @Test
    void addDrainDelete_flowIntoRouting() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of("--decode-ms-per-step", "20"), List.of(), routerArgs())) {
            String first = fleet.mocks.get(0).baseUrl();
            Client.Reply list = client.get(fleet.url("/workers"), AUTH);
            assertThat(list.status()).isEqualTo(200);
            JsonNode only = list.json().path("workers").get(0);
            assertThat(only.path("url").asText()).isEqualTo(first);
            assertThat(only.path("healthy").asBoolean()).isTrue();
            assertThat(only.path("breaker").asText()).isEqualTo("closed");

            MockWorkerMain.MockWorker added = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "20");
            try {
                Client.Reply created = client.postJson(fleet.url("/workers"),
                        "{\"url\":\"" + added.baseUrl() + "\",\"role\":\"regular\"}", AUTH);
                assertThat(created.status()).as(created.body()).isEqualTo(201);
                String id = created.json().path("id").asText();
                assertThat(id).isEqualTo(Fleet.idOf(added.baseUrl()));
                assertThat(client.postJson(fleet.url("/workers"), "{\"url\":\"" + added.baseUrl() + "/\"}", AUTH).status())
                        .as("the same worker twice").isEqualTo(409);
                assertThat(client.get(fleet.url("/workers"), AUTH).json().path("workers")).hasSize(2);
                await().atMost(Duration.ofSeconds(10)).until(() -> added.baseUrl().equals(
                        client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1)).header("x-kvroute-worker")));

                // drain the added worker while it streams: the stream finishes, new traffic avoids it
                CompletableFuture<Client.Reply> live = streamOn(fleet, added.baseUrl());
                Client.Reply drained = client.request("POST", fleet.url("/workers/" + id + "/drain"), null, AUTH);
                assertThat(drained.status()).isEqualTo(202);
                assertThat(drained.json().path("in_flight").asInt()).isEqualTo(1);
                for (int i = 0; i < 8; i++) {
                    assertThat(client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1)).header("x-kvroute-worker"))
                            .isEqualTo(first);
                }
                Client.Reply finished = live.get(30, TimeUnit.SECONDS);
                assertThat(finished.body()).endsWith("data: [DONE]\n\n");
                // The router releases its in-flight count when its own write of the last chunk completes, which
                // can be just after the client has read [DONE]: wait for it rather than race it.
                await().atMost(Duration.ofSeconds(10)).until(() ->
                        findWorker(client.get(fleet.url("/workers"), AUTH).json(), id).path("in_flight").asInt() == 0);
                JsonNode described = findWorker(client.get(fleet.url("/workers"), AUTH).json(), id);
                assertThat(described.path("draining").asBoolean()).isTrue();
                assertThat(described.path("in_flight").asInt()).isZero();

                Client.Reply removed = client.request("DELETE", fleet.url("/workers/" + id), null, AUTH);
                assertThat(removed.status()).isEqualTo(200);
                assertThat(removed.json().path("removed").asText()).isEqualTo(id);
                assertThat(client.request("DELETE", fleet.url("/workers/" + id), null, AUTH).status()).isEqualTo(404);
                assertThat(client.request("POST", fleet.url("/workers/" + id + "/drain"), null, AUTH).status()).isEqualTo(404);
                assertThat(client.get(fleet.url("/workers"), AUTH).json().path("workers")).hasSize(1);
                assertThat(client.request("PUT", fleet.url("/workers"), "{}", AUTH).status()).isEqualTo(405);
                long servedBefore = added.handler().requests();
                for (int i = 0; i < 6; i++) {
                    assertThat(client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1)).status()).isEqualTo(200);
                }
                assertThat(added.handler().requests()).as("a deleted worker gets no traffic").isEqualTo(servedBefore);
                assertThat(client.get(fleet.url("/metrics")).body()).doesNotContain("worker=\"" + added.baseUrl() + "\"");
            } finally {
                added.close();
            }
        }
    }

    /** Sends streams until one lands on {@code workerUrl}; returns it once its first chunk arrived. */
    private static CompletableFuture<Client.Reply> streamOn(Fleet fleet, String workerUrl) throws Exception {
        for (int i = 0; i < 10; i++) {
            CountDownLatch firstChunk = new CountDownLatch(1);
            CompletableFuture<Client.Reply> reply = client.send("POST", fleet.url("/v1/chat/completions"), "application/json",
                    Client.chat(true, 100).getBytes(StandardCharsets.UTF_8), firstChunk);
            assertThat(firstChunk.await(20, TimeUnit.SECONDS)).isTrue();
            if (fleet.router.router().inFlight().get(Fleet.idOf(workerUrl)) == 1) {
                return reply;
            }
            reply.get(30, TimeUnit.SECONDS);
        }
        throw new AssertionError("no stream landed on " + workerUrl);
    }

    private static JsonNode findWorker(JsonNode list, String id) {
        for (JsonNode worker : list.path("workers")) {
            if (worker.path("id").asText().equals(id)) {
                return worker;
            }
        }
        throw new AssertionError("no worker " + id + " in " + list);
    }

    @Test
    void apiKey_protectsInferenceEndpoints_butNotProbes() throws Exception {
        try (Fleet fleet = Fleet.start(1, List.of(), List.of(), List.of("--api-key", "inference-key"))) {
            for (String path : List.of("/v1/chat/completions", "/v1/completions", "/generate")) {
                for (String[] headers : List.of(new String[0], new String[] {"Authorization", "Bearer nope"})) {
                    Client.Reply reply = client.postJson(fleet.url(path), Client.chat(false, 1), headers);
                    assertThat(reply.status()).as(path).isEqualTo(401);
                    assertThat(reply.isOpenAiError()).isTrue();
                    assertThat(reply.header("www-authenticate")).isEqualTo("Bearer");
                }
            }
            Client.Reply ok = client.postJson(fleet.url("/v1/chat/completions"), Client.chat(false, 1),
                    "Authorization", "Bearer inference-key");
            assertThat(ok.status()).isEqualTo(200);
            assertThat(client.get(fleet.url("/healthz")).status()).isEqualTo(200);
            assertThat(client.get(fleet.url("/readyz")).status()).isEqualTo(200);
            assertThat(client.get(fleet.url("/metrics")).status()).as("see ApiKeyBoundaryTest").isEqualTo(401);
            assertThat(client.get(fleet.url("/workers"), "Authorization", "Bearer inference-key").status())
                    .as("the inference key is not an admin key").isEqualTo(404);
        }
    }
}
