package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.worker.Worker;
import io.kvroute.scheduler.report.KvEventPublisher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --kv-events-hash tokens} over real JeroMQ: the scheduler's {@link KvEventPublisher} plays
 * an engine whose block hashes are random numbers (vLLM's per-process seed), with correct
 * {@code token_ids}. Two subscriptions to the same publisher, one per keying mode: the request's
 * tokens match the tokens-keyed worker through {@link ExactCacheIndex} and never the engine-keyed one.
 */
class TokenKeyedPlaneTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BS = 4;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private KvEventsPlane plane;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
    }

    private double malformed(String reason) {
        return registry.find("kvroute.kv.events.malformed").tag("reason", reason).counter().count();
    }

    @Test
    void randomEngineHashes_matchOnlyTheTokensKeyedSubscription() throws Exception {
        int[] prompt = {151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198, 151644, 872};
        SplittableRandom rnd = new SplittableRandom(99);
        long[] engine = {rnd.nextLong(), rnd.nextLong(), rnd.nextLong()};
        Worker tok = Worker.regular("http://127.0.0.1:1");
        Worker eng = Worker.regular("http://127.0.0.1:2");
        try (KvEventPublisher pub = KvEventPublisher.bind("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", 1, "kv",
                KvEventPublisher.Options.defaults().withHeartbeatNanos(50_000_000))) {
            plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null);
            plane.start();
            plane.addWorker(tok.id(), tok.url(), "m", pub.endpoints(), pub.replayEndpoints(), "kv", BS, KvHashMode.TOKENS);
            plane.addWorker(eng.id(), eng.url(), "m", pub.endpoints(), pub.replayEndpoints(), "kv", BS, KvHashMode.ENGINE);
            await().atMost(WAIT).until(() -> plane.snapshot().workers().values().stream()
                    .filter(KvEventsSnapshot.WorkerEvents::live).count() == 2);
            assertThat(plane.snapshot().get(tok.id()).hashMode()).isEqualTo(KvHashMode.TOKENS);

            pub.blockStored(0, Arrays.copyOf(engine, 2), null, Arrays.copyOf(prompt, 2 * BS), BS);
            pub.blockStored(0, new long[] {engine[2]}, engine[1], Arrays.copyOfRange(prompt, 2 * BS, 3 * BS), BS);
            ExactCacheIndex exact = new ExactCacheIndex(plane);
            await().atMost(WAIT).until(() -> exact.matchedTokens(List.of(tok, eng), prompt).get(tok.id()) == 3L * BS);
            assertThat(exact.matchedTokens(List.of(tok, eng), prompt)).isEqualTo(Map.of(tok.id(), 12L, eng.id(), 0L));

            pub.blockStored(0, new long[] {rnd.nextLong()}, 424242L, Arrays.copyOf(prompt, BS), BS); // parent never stored
            await().atMost(WAIT).until(() -> malformed("unknown_parent") == 1);
            pub.blockRemoved(0, new long[] {engine[1]});
            await().atMost(WAIT).until(() -> exact.matchedTokens(List.of(tok), prompt).get(tok.id()) == BS);
            pub.allBlocksCleared(0);
            await().atMost(WAIT).until(() -> exact.matchedTokens(List.of(tok), prompt).get(tok.id()) == 0);
            // after the clear the map is empty too: a child of a pre-clear block is an orphan
            pub.blockStored(0, new long[] {rnd.nextLong()}, engine[0], Arrays.copyOfRange(prompt, BS, 2 * BS), BS);
            await().atMost(WAIT).until(() -> malformed("unknown_parent") == 2);
            assertThat(malformed("missing_token_ids")).isZero();
        }
    }
}
