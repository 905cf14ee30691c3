package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.kvevents.KvEventsConfig;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.kvevents.KvHashMode;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.KvEventsTemplate;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Which advertised or templated workers the exact index subscribes, and the refusals it counts. */
class KvEventsWiringTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Worker worker(String url, String serverInfo) throws Exception {
        return Worker.regular(url).withKvEvents(KvEventsAdvert.parse(JSON.readTree(serverInfo))).withEngine(EngineType.SGLANG);
    }

    private static double refused(SimpleMeterRegistry registry, String reason) {
        return registry.find("kvroute.kv.events.workers.refused").tag("reason", reason).counter().count();
    }

    /** SGLang with EAGLE keys its pages by token bigrams: refused loudly and counted, never silently unmatched. */
    @Test
    void eagleEngine_isRefusedAndCounted_aPlainOneIsSubscribed() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null)) {
            plane.start();
            KvEventsWiring wiring = new KvEventsWiring(plane, "auto", registry);
            String block = "\"kv_events\": {\"endpoint_host\": \"*\", \"endpoint_port_base\": 45557, \"topic\": \"kv\","
                    + " \"block_size\": 64, \"dp_size\": 1}";
            Worker eagle = worker("http://127.0.0.1:30001", "{\"speculative_algorithm\": \"EAGLE3\", " + block + "}");
            Worker plain = worker("http://127.0.0.1:30002", "{\"speculative_algorithm\": null, " + block + "}");
            assertThat(eagle.kvEvents().bigramPages()).isTrue();
            assertThat(plain.kvEvents().bigramPages()).isFalse();
            wiring.subscribe(eagle);
            wiring.subscribe(eagle); // a later registry update: logged and counted once
            wiring.subscribe(plain);
            await().atMost(Duration.ofSeconds(20)).until(() -> plane.snapshot().get(plain.id()) != null);
            assertThat(plane.snapshot().get(eagle.id())).isNull();
            assertThat(refused(registry, "bigram_pages")).isEqualTo(1);
        }
    }

    /**
     * A vLLM worker's template is subscribed (keyed by tokens) once discovery typed it; when its engine
     * then reports another block size on /metrics it is unsubscribed and counted once; a template that
     * agrees with the engine stays.
     */
    @Test
    void templatedVllmWorker_subscribedByTokens_thenRefusedWhenTheEngineReportsAnotherBlockSize() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null)) {
            plane.start();
            KvEventsWiring wiring = new KvEventsWiring(plane, "auto", registry);
            KvEventsAdvert template = KvEventsTemplate.parse("endpoint=tcp://*:45600;block-size=16;dp-size=2").advert();
            Worker untyped = Worker.regular("http://127.0.0.1:30003").withKvEvents(template);
            Worker agreeing = Worker.regular("http://127.0.0.1:30004").withKvEvents(template).withEngine(EngineType.VLLM);
            wiring.subscribe(untyped);
            Worker typed = untyped.withEngine(EngineType.VLLM).withModelId("m");
            wiring.subscribe(typed);
            wiring.subscribe(agreeing);
            wiring.engineBlockSize(agreeing, 16);
            await().atMost(Duration.ofSeconds(20)).until(() -> plane.snapshot().get(typed.id()) != null
                    && plane.snapshot().get(agreeing.id()) != null);
            assertThat(plane.snapshot().get(typed.id()).hashMode()).isEqualTo(KvHashMode.TOKENS);
            assertThat(plane.snapshot().get(typed.id()).slots()).hasSize(2);
            wiring.engineBlockSize(typed, 32);
            wiring.engineBlockSize(typed, 32);
            wiring.subscribe(typed); // a later registry update keeps it refused
            await().atMost(Duration.ofSeconds(20)).until(() -> plane.snapshot().get(typed.id()) == null);
            assertThat(refused(registry, "block_size_mismatch")).isEqualTo(1);
            assertThat(plane.snapshot().get(agreeing.id())).isNotNull();
        }
    }

    @Test
    void engineHashFlag_refusesAVllmWorker_andCountsIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null)) {
            plane.start();
            KvEventsWiring wiring = new KvEventsWiring(plane, "engine", registry);
            Worker vllm = Worker.regular("http://127.0.0.1:30005").withEngine(EngineType.VLLM)
                    .withKvEvents(KvEventsTemplate.parse("endpoint=tcp://*:45700;block-size=16").advert());
            wiring.subscribe(vllm);
            assertThat(refused(registry, "engine_hash")).isEqualTo(1);
            assertThat(plane.snapshot().get(vllm.id())).isNull();
        }
    }
}
