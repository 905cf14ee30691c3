package io.kvroute.router.kvevents;

import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.BS;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.T;
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
 * The events plane against engine-shaped vLLM publishers ({@link VllmEngineFake}: no heartbeat,
 * vLLM's replay answers with their topic frame) fed vLLM's own encoding (the golden vectors), keyed
 * {@code --kv-events-hash tokens} as vLLM's seeded hashes require.
 */
class VllmKvEventsPlaneTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ZContext ctx = new ZContext(1);
    private final Worker worker = Worker.regular("http://127.0.0.1:8000");
    private KvEventsPlane plane;
    private ExactCacheIndex exact;

    @AfterEach
    void tearDown() {
        if (plane != null) {
            plane.close();
        }
        ctx.close();
    }

    private void start() {
        plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, registry, null);
        plane.start();
        exact = new ExactCacheIndex(plane);
    }

    private void subscribe(VllmEngineFake... ranks) {
        List<String> pubs = java.util.Arrays.stream(ranks).map(r -> r.pubEndpoint).toList();
        List<String> replays = java.util.Arrays.stream(ranks).map(r -> r.replayEndpoint).toList();
        plane.addWorker(worker.id(), worker.url(), "m", pubs, replays, "kv@pod@m", BS, KvHashMode.TOKENS);
    }

    private Long matched(int[] prompt) {
        return exact.matchedTokens(List.of(worker), prompt).get(worker.id());
    }

    private double count(String name, String tag, String value) {
        var c = registry.find(name);
        return (tag == null ? c : c.tag(tag, value)).counter().count();
    }

    /**
     * A router (re)started next to a DP-2 vLLM engine: rank 0 stored a chain before the router
     * came, rank 1 has published nothing, neither sends anything live. The catch-up replay rebuilds
     * rank 0's blocks, and rank 1, with no events, holds nothing: the worker is exact.
     */
    @Test
    void idleRank_doesNotHideTheWorker_andHistoryIsCaughtUpFromReplay() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m"); VllmEngineFake r1 = new VllmEngineFake(ctx, "kv@pod@m")) {
            r0.keep(vector("multi_block_chain")); // stores 3 blocks of T, evicts the third
            start();
            subscribe(r0, r1);
            await().atMost(WAIT).until(() -> matched(T) != null && matched(T) == 2L * BS);
            assertThat(plane.snapshot().get(worker.id()).states()).containsExactly("live", "live");
            assertThat(r0.replayRequests).containsExactly(0L);
            assertThat(r1.replayRequests).containsExactly(0L);
            assertThat(count("kvroute.kv.events.replays", "outcome", "completed")).isEqualTo(2);
        }
    }

    /**
     * Only GPU blocks of the full-attention group count; a gap is replayed in vLLM's 4-frame shape;
     * blocks of an adapter or with a cache salt never match the plain prompt.
     */
    @Test
    void gpuFullAttentionOnly_gapReplayedInVllmsShape_loraAndSaltKeptApart() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m")) {
            start();
            subscribe(r0);
            await().atMost(WAIT).until(() -> plane.snapshot().get(worker.id()) != null
                    && plane.snapshot().get(worker.id()).live() && !r0.replayRequests.isEmpty());
            // the live socket may still be joining: resend until the batch is seen (a duplicate is stale)
            byte[] hybrid = vector("hybrid_tiers");
            long seq = r0.publish(hybrid);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (matched(T) == 2L * BS) {
                    return true;
                }
                r0.sendRaw(seq, hybrid);
                return false;
            });
            assertThat(matched(U)).isZero(); // stored on CPU only
            assertThat(count("kvroute.kv.events.ignored", "reason", "medium")).isEqualTo(2);
            assertThat(count("kvroute.kv.events.ignored", "reason", "group")).isEqualTo(2);

            r0.keep(vector("lora_extra_keys")); // lost on the live socket
            r0.publish(vector("multi_block_chain")); // a gap: replayed from the lost seq
            await().atMost(WAIT).until(() -> count("kvroute.kv.events.replays", "outcome", "completed") >= 2
                    && plane.snapshot().get(worker.id()).live());
            assertThat(r0.replayRequests).containsExactly(0L, seq + 1);
            assertThat(matched(T)).isEqualTo(2L * BS);
            assertThat(matched(U)).isZero(); // an adapter's block and a salted block of U are not the base model's
            assertThat(count("kvroute.kv.events.malformed", "reason", "bad_frames")).isZero();
        }
    }

    /** vLLM starts a too-old replay at its oldest kept batch: rebuild what it holds, but the worker is not exact. */
    @Test
    void replayOlderThanTheBuffer_rebuildsWhatIsHeld_andIsNotExact() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m")) {
            r0.keep(vector("lora_extra_keys"));
            r0.keep(vector("multi_block_chain"));
            r0.dropOldest(1); // seq 0 fell out of buffer_steps
            start();
            subscribe(r0);
            await().atMost(WAIT).until(() -> plane.snapshot().get(worker.id()) != null
                    && plane.snapshot().get(worker.id()).states().equals(List.of("unknown")));
            assertThat(matched(T)).isNull(); // not exact: the tree answers for it
            int slot = plane.snapshot().get(worker.id()).slots()[0];
            long[] own = TokenChainHash.hashes(T, T.length, BS, -1);
            assertThat(plane.index().match(new BlockIndex.Key("m", -1, BS), own, plane.slotCount())[slot]).isEqualTo(2);
            assertThat(count("kvroute.kv.events.replays", "outcome", "failed")).isEqualTo(1);
        }
    }
}
