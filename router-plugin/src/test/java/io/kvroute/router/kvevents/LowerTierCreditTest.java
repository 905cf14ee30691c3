package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.zeromq.ZContext;

/**
 * {@code --kv-events-lower-tier-weight}: a vLLM-shaped publisher ({@link VllmEngineFake}, real JeroMQ,
 * events packed as vLLM's tagged maps, {@code vllm/distributed/kv_events.py}) stores and evicts one
 * chain's blocks on the GPU and on the CPU (with {@code token_ids}, and without them as vLLM's CPU
 * offload sends its copies), in a random order from a fixed seed. After every batch the exact index's
 * answer is compared with a naive model: the GPU prefix in blocks, plus the weight times the blocks
 * that continue it on the CPU, times the block size.
 */
class LowerTierCreditTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BS = 16;
    private static final int BLOCKS = 8;
    private static final double WEIGHT = 0.5;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** What the engine holds, block by block of the chain. */
    private static final class Model {
        final boolean[] gpu = new boolean[BLOCKS];
        final boolean[] cpu = new boolean[BLOCKS];

        /** Matched tokens of a request whose first {@code shared} blocks are the chain's. */
        long expected(int shared) {
            int g = 0;
            while (g < shared && gpu[g]) {
                g++;
            }
            int e = 0;
            while (g + e < shared && cpu[g + e]) {
                e++;
            }
            return Math.round((g + WEIGHT * e) * BS);
        }

        boolean known(int b) {
            return gpu[b] || cpu[b];
        }
    }

    private static byte[] batch(Msgpack.Body event) throws IOException {
        return Msgpack.pack(p -> {
            p.packArrayHeader(3).packDouble(1.0).packArrayHeader(1);
            event.pack(p);
            p.packInt(0);
        });
    }

    /** A vLLM BlockStored of blocks {@code from..to-1}; {@code tokens} null = sent without token ids. */
    private static Msgpack.Body stored(long[] hashes, int from, int to, int[] tokens, String medium) {
        return p -> {
            p.packMapHeader(8).packString("type").packString("BlockStored");
            p.packString("block_hashes").packArrayHeader(to - from);
            for (int b = from; b < to; b++) {
                p.packLong(hashes[b]);
            }
            p.packString("parent_block_hash");
            if (from == 0) {
                p.packNil();
            } else {
                p.packLong(hashes[from - 1]);
            }
            p.packString("token_ids");
            if (tokens == null) {
                p.packArrayHeader(0);
            } else {
                p.packArrayHeader((to - from) * BS);
                for (int i = from * BS; i < to * BS; i++) {
                    p.packInt(tokens[i]);
                }
            }
            p.packString("block_size").packInt(BS);
            p.packString("lora_id").packNil();
            p.packString("medium").packString(medium);
            p.packString("lora_name").packNil();
        };
    }

    private static Msgpack.Body removed(long hash, String medium) {
        return p -> {
            p.packMapHeader(3).packString("type").packString("BlockRemoved");
            p.packString("block_hashes").packArrayHeader(1).packLong(hash);
            p.packString("medium").packString(medium);
        };
    }

    private static void cleared(MessageBufferPacker p) throws IOException {
        p.packMapHeader(1).packString("type").packString("AllBlocksCleared");
    }

    private double batches() {
        return registry.find("kvroute.kv.events.batches").counter().count();
    }

    @Test
    void gpuPrefixPlusWeightedCpuExtension_matchesTheNaiveModel_afterEveryBatch() throws Exception {
        SplittableRandom rnd = new SplittableRandom(20261205);
        int[] tokens = new int[BLOCKS * BS];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = 1000 + rnd.nextInt(50_000);
        }
        long[] engine = new long[BLOCKS];
        for (int b = 0; b < BLOCKS; b++) {
            engine[b] = rnd.nextLong(); // vLLM's per-process seed: nothing the router can reproduce
        }
        // a second request sharing the first 5 blocks, then its own
        int[] fork = Arrays.copyOf(tokens, 6 * BS);
        Arrays.fill(fork, 5 * BS, 6 * BS, 7);

        Worker worker = Worker.regular("http://127.0.0.1:8000");
        Model model = new Model();
        try (ZContext ctx = new ZContext(1);
                KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults().withLowerTierWeight(WEIGHT),
                        System::nanoTime, registry, null);
                VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m")) {
            plane.start();
            ExactCacheIndex exact = new ExactCacheIndex(plane);
            plane.addWorker(worker.id(), worker.url(), "m", List.of(r0.pubEndpoint), List.of(r0.replayEndpoint),
                    "kv@pod@m", BS, KvHashMode.TOKENS);
            await().atMost(WAIT).until(() -> plane.snapshot().get(worker.id()) != null
                    && plane.snapshot().get(worker.id()).live() && !r0.replayRequests.isEmpty());
            // the first block on the GPU, resent through the slow joiner until seen (a duplicate is stale)
            byte[] first = batch(stored(engine, 0, 1, tokens, "GPU"));
            long seq = r0.publish(first);
            model.gpu[0] = true;
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (exact.matchedTokens(List.of(worker), tokens).get(worker.id()) == BS) {
                    return true;
                }
                r0.sendRaw(seq, first);
                return false;
            });

            int kinds = 0;
            for (int op = 0; op < 80; op++) {
                Msgpack.Body event = next(rnd, model, engine, tokens);
                double applied = batches();
                r0.publish(batch(event));
                await().atMost(WAIT).until(() -> batches() > applied);
                assertThat(exact.matchedTokens(List.of(worker), tokens).get(worker.id()))
                        .as("op %d, gpu %s, cpu %s", op, Arrays.toString(model.gpu), Arrays.toString(model.cpu))
                        .isEqualTo(model.expected(BLOCKS));
                assertThat(exact.matchedTokens(List.of(worker), fork).get(worker.id()))
                        .as("fork, op %d", op).isEqualTo(model.expected(5));
                kinds += model.expected(BLOCKS) % BS != 0 ? 1 : 0;
                long cpuBlocks = java.util.stream.IntStream.range(0, BLOCKS).filter(b -> model.cpu[b]).count();
                assertThat(registry.get("kvroute.kv.events.lower.tier.blocks").gauge().value())
                        .as("lower-tier blocks, op %d", op).isEqualTo(cpuBlocks);
            }
            assertThat(kinds).as("batches where the CPU extension counted").isPositive();
            assertThat(registry.find("kvroute.kv.events.malformed").counters()).allMatch(c -> c.count() == 0);
            assertThat(registry.find("kvroute.kv.events.ignored").tag("reason", "medium").counter().count()).isZero();
        }
    }

    /** One valid step of the engine: each store's parent and each hash-only copy's identity is known. */
    private static Msgpack.Body next(SplittableRandom rnd, Model m, long[] engine, int[] tokens) {
        while (true) {
            int b = rnd.nextInt(BLOCKS);
            int len = 1 + rnd.nextInt(3);
            int to = Math.min(BLOCKS, b + len);
            switch (rnd.nextInt(11)) {
                case 0, 1, 2 -> { // GPU store: vLLM's parent is a GPU block
                    if (b == 0 || m.gpu[b - 1]) {
                        Arrays.fill(m.gpu, b, to, true);
                        return stored(engine, b, to, tokens, "GPU");
                    }
                }
                case 3, 4 -> { // CPU copy named by hash only: the blocks were seen before
                    if ((b == 0 || m.known(b - 1)) && m.known(b)) {
                        int end = b;
                        while (end < to && m.known(end)) {
                            end++;
                        }
                        Arrays.fill(m.cpu, b, end, true);
                        return stored(engine, b, end, null, "CPU");
                    }
                }
                case 5 -> { // CPU store with its tokens
                    if (b == 0 || m.known(b - 1)) {
                        Arrays.fill(m.cpu, b, to, true);
                        return stored(engine, b, to, tokens, "CPU");
                    }
                }
                case 6, 7 -> {
                    if (m.gpu[b]) {
                        m.gpu[b] = false;
                        return removed(engine[b], "GPU");
                    }
                }
                case 8, 9 -> {
                    if (m.cpu[b]) {
                        m.cpu[b] = false;
                        return removed(engine[b], "CPU");
                    }
                }
                default -> {
                    if (rnd.nextInt(4) == 0) {
                        Arrays.fill(m.gpu, false);
                        Arrays.fill(m.cpu, false);
                        return LowerTierCreditTest::cleared;
                    }
                }
            }
        }
    }
}
