package io.kvroute.router.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.router.kvevents.KvEventsConfig;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Which advertised workers the exact index subscribes. */
class KvEventsWiringTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Worker worker(String url, String serverInfo) throws Exception {
        return Worker.regular(url).withKvEvents(KvEventsAdvert.parse(JSON.readTree(serverInfo)));
    }

    /** SGLang with EAGLE keys its pages by token bigrams: refused loudly and counted, never silently unmatched. */
    @Test
    void eagleEngine_isRefusedAndCounted_aPlainOneIsSubscribed() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null)) {
            plane.start();
            String block = "\"kv_events\": {\"endpoint_host\": \"*\", \"endpoint_port_base\": 45557, \"topic\": \"kv\","
                    + " \"block_size\": 64, \"dp_size\": 1}";
            Worker eagle = worker("http://127.0.0.1:30001", "{\"speculative_algorithm\": \"EAGLE3\", " + block + "}");
            Worker plain = worker("http://127.0.0.1:30002", "{\"speculative_algorithm\": null, " + block + "}");
            assertThat(eagle.kvEvents().bigramPages()).isTrue();
            assertThat(plain.kvEvents().bigramPages()).isFalse();
            KvEventsWiring.subscribe(plane, eagle);
            KvEventsWiring.subscribe(plane, plain);
            await().atMost(Duration.ofSeconds(20)).until(() -> plane.snapshot().get(plain.id()) != null);
            assertThat(plane.snapshot().get(eagle.id())).isNull();
            assertThat(registry.find("kvroute.kv.events.workers.refused").tag("reason", "bigram_pages").counter()
                    .count()).isEqualTo(1);
        }
    }
}
