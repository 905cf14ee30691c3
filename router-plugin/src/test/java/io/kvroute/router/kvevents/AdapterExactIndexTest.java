package io.kvroute.router.kvevents;

import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.BS;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.U;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.vector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/**
 * The exact index answers a request naming LoRA adapter A from blocks stored under A only: a vLLM
 * engine ({@link VllmEngineFake}, vLLM's encoding from the golden vectors) stored U's block under
 * {@code lora_name} "sql-adapter" (with the name in its {@code extra_keys}, as vLLM hashes it) and U's
 * block salted with a cache salt. Real JeroMQ, catch-up replay, tokens keying.
 */
class AdapterExactIndexTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final ZContext ctx = new ZContext(1);
    private final Worker worker = Worker.regular("http://127.0.0.1:8000");
    private KvEventsPlane plane;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
        ctx.close();
    }

    @Test
    void adapterBlocks_matchRequestsForThatAdapterOnly() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m")) {
            r0.keep(vector("lora_extra_keys"));
            plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, new SimpleMeterRegistry(), null);
            plane.start();
            ExactCacheIndex exact = new ExactCacheIndex(plane);
            plane.addWorker(worker.id(), worker.url(), "m", List.of(r0.pubEndpoint), List.of(r0.replayEndpoint),
                    "kv@pod@m", BS, KvHashMode.TOKENS);
            await().atMost(WAIT).until(() -> {
                Long m = exact.matchedTokens(List.of(worker), U, "sql-adapter").get(worker.id());
                return m != null && m == BS;
            });
            assertThat(exact.matchedTokens(List.of(worker), U, "chat-adapter")).containsEntry(worker.id(), 0L);
            assertThat(exact.matchedTokens(List.of(worker), U, null)).containsEntry(worker.id(), 0L);
            assertThat(exact.matchedTokens(List.of(worker), U)).containsEntry(worker.id(), 0L);
        }
    }
}
