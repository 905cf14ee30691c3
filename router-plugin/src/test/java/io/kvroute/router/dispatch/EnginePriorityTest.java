package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The router's class as the engine's {@code priority} field: written in each engine's sense, into the
 * bytes that go to the worker chosen for each attempt; and a vLLM worker that refuses the field (400,
 * no priority scheduling) is asked again without it, so the client never sees the router's mistake.
 */
class EnginePriorityTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] CLIENT = "{\"prompt\":\"hi\",\"max_tokens\":4}".getBytes(StandardCharsets.UTF_8);

    private static EnginePriority interactive() {
        return new EnginePriority(1, ConcurrentHashMap.newKeySet());
    }

    @Test
    void eachEngineGetsItsOwnSense_andTrtllmNone() {
        assertThat(interactive().valueFor(EngineType.VLLM)).isEqualTo(OptionalInt.of(-1));
        assertThat(interactive().valueFor(EngineType.SGLANG)).isEqualTo(OptionalInt.of(1));
        assertThat(interactive().valueFor(EngineType.TRTLLM)).isEmpty();
        EnginePriority batch = new EnginePriority(-1, Set.of());
        assertThat(batch.valueFor(EngineType.VLLM)).isEqualTo(OptionalInt.of(1));
        assertThat(batch.valueFor(EngineType.SGLANG)).isEqualTo(OptionalInt.of(-1));
        assertThat(new EnginePriority(0, Set.of()).valueFor(EngineType.VLLM)).as("default sends none").isEmpty();
    }

    @Test
    void theFieldIsSplicedAsTheFirstMember_andTheRestIsUnchanged() throws Exception {
        String[] bodies = {"{}", " { } ", "{\"a\":1}", "\n{\n  \"messages\": [{\"role\":\"user\",\"content\":\"{x}\"}],"
                + " \"n\": 2\n}", "{\"nested\":{\"priority\":3}}"};
        for (String text : bodies) {
            byte[] out = EnginePriority.withPriority(text.getBytes(StandardCharsets.UTF_8), -2);
            JsonNode parsed = JSON.readTree(out);
            ObjectNode expected = (ObjectNode) JSON.readTree(text);
            expected.put("priority", -2);
            assertThat(parsed).as(text).isEqualTo(expected);
            assertThat(new String(out, StandardCharsets.UTF_8)).as(text).contains("{\"priority\":-2");
        }
    }

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of("http://a:1")).retry(SettingsBinder.parse(RetrySettings.class,
                "--retry-max-attempts=2", "--retry-initial-backoff-ms=100", "--retry-jitter=0")).build();
    }

    private static Route route(EnginePriority priority, Worker... workers) {
        List<Worker> pool = List.of(workers);
        return new Route(ApiKind.COMPLETIONS, CLIENT, false, 1, null, null, new RouteHints(null, null, "m"),
                () -> pool, null, priority);
    }

    private static JsonNode sentBody(CoreFixture f, int i) throws Exception {
        return JSON.readTree(f.upstream.sent.get(i).request.body());
    }

    @Test
    void aRetryOnAnotherEngineGetsThatEnginesSense() throws Exception {
        Worker vllm = Worker.regular("http://v:1").withEngine(EngineType.VLLM);
        Worker sglang = Worker.regular("http://s:1").withEngine(EngineType.SGLANG);
        CoreFixture f = new CoreFixture(config());
        new Dispatch(f.deps, f.plain, route(interactive(), vllm, sglang), new CoreFixture.RecordingSink(),
                f.clock.nanoTime()).start();
        JsonNode first = sentBody(f, 0);
        f.upstream.sent.get(0).fail(0, new java.net.ConnectException("refused"));
        f.clock.forwardMillis(100);
        JsonNode second = sentBody(f, 1);
        JsonNode onVllm = f.upstream.sent.get(0).request.url().startsWith("http://v") ? first : second;
        JsonNode onSglang = onVllm == first ? second : first;
        assertThat(onVllm.path("priority").asInt()).isEqualTo(-1);
        assertThat(onSglang.path("priority").asInt()).isEqualTo(1);
    }

    @Test
    void aVllmWorkerRefusingTheField_isAskedAgainWithoutIt_andGetsNoneFromThenOn() throws Exception {
        Worker vllm = Worker.regular("http://v:1").withEngine(EngineType.VLLM);
        CoreFixture f = new CoreFixture(config());
        EnginePriority priority = interactive();
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, route(priority, vllm), client, f.clock.nanoTime()).start();
        assertThat(sentBody(f, 0).path("priority").asInt()).isEqualTo(-1);
        CoreFixture.Sent refused = f.upstream.sent.get(0);
        refused.headers(400, "application/json");
        refused.chunk("{\"error\":{\"message\":\"Got priority -1 but Priority scheduling is not enabled.\"}}");
        refused.complete(400);
        assertThat(client.status).as("the router's 400 is held").isZero();
        assertThat(f.upstream.sent).hasSize(2);
        assertThat(sentBody(f, 1).has("priority")).isFalse();
        assertThat(f.upstream.sent.get(1).request.url()).startsWith("http://v:1");
        CoreFixture.Sent served = f.upstream.sent.get(1);
        served.headers(200, "application/json");
        served.chunk("{\"ok\":true}");
        served.complete(200);
        assertThat(client.status).isEqualTo(200);
        assertThat(client.body.toString(StandardCharsets.UTF_8)).isEqualTo("{\"ok\":true}");
        assertThat(priority.refusingWorkerIds()).containsExactly(vllm.id());
        assertThat(f.deps.inFlight().get(vllm.id())).isZero();

        new Dispatch(f.deps, f.plain, route(priority, vllm), new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        assertThat(sentBody(f, 2).has("priority")).as("a refusing worker gets no field").isFalse();
    }

    @Test
    void aClientsOwn400_isRelayedAfterTheSecondAsk_andBlamesNoWorker() throws Exception {
        Worker vllm = Worker.regular("http://v:1").withEngine(EngineType.VLLM);
        CoreFixture f = new CoreFixture(config());
        EnginePriority priority = interactive();
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, route(priority, vllm), client, f.clock.nanoTime()).start();
        for (int i = 0; i < 2; i++) {
            CoreFixture.Sent call = f.upstream.sent.get(i);
            call.headers(400, "application/json");
            call.chunk("{\"error\":{\"message\":\"max_tokens is too large\"}}");
            call.complete(400);
        }
        assertThat(f.upstream.sent).hasSize(2);
        assertThat(client.status).isEqualTo(400);
        assertThat(client.body.toString(StandardCharsets.UTF_8)).contains("max_tokens is too large");
        assertThat(priority.refusingWorkerIds()).isEmpty();
    }

    @Test
    void anSglangWorker_isNeverAskedTwice() throws Exception {
        Worker sglang = Worker.regular("http://s:1").withEngine(EngineType.SGLANG);
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, route(interactive(), sglang), client, f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(400, "application/json");
        call.chunk("{\"error\":{\"message\":\"bad\"}}");
        call.complete(400);
        assertThat(f.upstream.sent).as("SGLang ignores the field without priority scheduling: a 400 is the client's")
                .hasSize(1);
        assertThat(client.status).isEqualTo(400);
    }
}
