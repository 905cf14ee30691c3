package io.kvroute.router.kvevents;

import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.BS;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.T;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.U;
import static io.kvroute.router.kvevents.VllmGoldenVectorsTest.vector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.router.kvevents.SubscriptionRule.Verdict;
import io.kvroute.router.policy.PromptExtras;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.KvEventsTemplate;
import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.zeromq.ZContext;

/**
 * The events plane against engine-shaped vLLM publishers ({@link VllmEngineFake}: no heartbeat,
 * vLLM's replay answers with their topic frame) fed vLLM's own encoding (the golden vectors), keyed
 * {@code --kv-events-hash tokens} as vLLM's seeded hashes require, and {@code engine} for a worker
 * whose template states {@code hash-algo=sha256_cbor;hash-seed=N} or {@code hash-algo=xxhash_cbor;hash-seed=N}.
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
            // a request with that block's cache_salt meets it (keyed by tokens, salted as its extra_keys entry);
            // another salt does not, nor does the salt on the unsalted blocks of T
            assertThat(exact.matchedTokens(List.of(worker), U, null, PromptExtras.of("salt-1", null)))
                    .containsEntry(worker.id(), (long) BS);
            assertThat(exact.matchedTokens(List.of(worker), U, null, PromptExtras.of("salt-2", null)))
                    .containsEntry(worker.id(), 0L);
            assertThat(exact.matchedTokens(List.of(worker), T, null, PromptExtras.of("salt-1", null)))
                    .containsEntry(worker.id(), 0L);
            assertThat(exact.matchedTokens(List.of(worker), T, null, PromptExtras.of("", null)))
                    .as("an empty salt is none, as in vLLM").containsEntry(worker.id(), 2L * BS);
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

    /** A gap on a rank without a replay endpoint is a failed replay (the worker drops to unknown). */
    @Test
    void gapWithoutReplayEndpoint_countsAFailedReplay() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m")) {
            start();
            plane.addWorker(worker.id(), worker.url(), "m", List.of(r0.pubEndpoint), List.of(), "kv@pod@m", BS,
                    KvHashMode.TOKENS);
            // nothing received and nothing to catch up from: it holds nothing, an exact answer of 0
            await().atMost(WAIT).until(() -> matched(T) != null);
            assertThat(matched(T)).isZero();
            byte[] chain = vector("multi_block_chain");
            long first = r0.publish(chain);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (matched(T) != null && matched(T) == 2L * BS) {
                    return true;
                }
                r0.sendRaw(first, chain);
                return false;
            });
            r0.keep(vector("lora_extra_keys")); // lost
            r0.publish(vector("hybrid_tiers"));
            await().atMost(WAIT).until(() -> plane.snapshot().get(worker.id()).states().equals(List.of("unknown")));
            assertThat(count("kvroute.kv.events.replays", "outcome", "failed")).isEqualTo(1);
        }
    }

    /**
     * Engines send no heartbeat on this socket: a rank that published and then went quiet gets no
     * warning, however many silence periods pass; one that never sent anything gets one warning for
     * the subscription, not one per period.
     */
    @Test
    void quietPublisher_isNotWarnedAbout_aNeverHeardOneOnce() throws Exception {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000_000_000_000L);
        long silenceNanos = 5_000_000_000L;
        plane = new KvEventsPlane(KvEventsConfig.defaults().withSilence(Duration.ofNanos(silenceNanos)), clock::get,
                registry, null);
        plane.start();
        exact = new ExactCacheIndex(plane);
        Worker never = Worker.regular("http://127.0.0.1:8001");
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m"); VllmEngineFake idle = new VllmEngineFake(ctx, "kv@pod@m")) {
            plane.addWorker(worker.id(), worker.url(), "m", List.of(r0.pubEndpoint), List.of(), "kv@pod@m", BS,
                    KvHashMode.TOKENS);
            plane.addWorker(never.id(), never.url(), "m", List.of(idle.pubEndpoint), List.of(), "kv@pod@m", BS,
                    KvHashMode.TOKENS);
            byte[] chain = vector("multi_block_chain");
            long first = r0.publish(chain);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (matched(T) != null && matched(T) == 2L * BS) {
                    return true;
                }
                r0.sendRaw(first, chain);
                return false;
            });
            for (int period = 1; period <= 3; period++) {
                clock.addAndGet(silenceNanos + 1);
                int silences = period + 1; // one episode of the quiet rank per period, one of the never-heard rank
                await().atMost(WAIT).until(() -> count("kvroute.kv.events.silences", null, null) == silences);
                double applied = count("kvroute.kv.events.batches", null, null);
                await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                    if (count("kvroute.kv.events.batches", null, null) > applied) {
                        return true;
                    }
                    r0.publish(vector("legacy_array")); // traffic again (through the fresh socket), then quiet again
                    return false;
                });
            }
            assertThat(plane.silenceWarnings).isEqualTo(1); // the never-heard rank, once
        }
    }

    /**
     * A DP-2 worker whose history sits on rank 1 only: the best rank is 1, the one a pinned request
     * must go to; a single-rank worker and an unmatched prompt are never pinned.
     */
    @Test
    void bestRank_isTheRankHoldingTheLongestMatch() throws Exception {
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m"); VllmEngineFake r1 = new VllmEngineFake(ctx, "kv@pod@m")) {
            r1.keep(vector("multi_block_chain")); // 2 blocks of T held by rank 1
            start();
            subscribe(r0, r1);
            await().atMost(WAIT).until(() -> matched(T) != null && matched(T) == 2L * BS);
            assertThat(exact.bestRank(worker, T)).isEqualTo(1);
            assertThat(exact.bestRank(worker, U)).isEqualTo(-1); // nobody holds U on GPU for the base model
        }
        try (VllmEngineFake only = new VllmEngineFake(ctx, "kv@pod@m")) {
            only.keep(vector("multi_block_chain"));
            plane.addWorker(worker.id(), worker.url(), "m", List.of(only.pubEndpoint), List.of(only.replayEndpoint),
                    "kv@pod@m", BS, KvHashMode.TOKENS);
            await().atMost(WAIT).until(() -> plane.snapshot().get(worker.id()).slots().length == 1
                    && matched(T) != null && matched(T) == 2L * BS);
            assertThat(exact.bestRank(worker, T)).isEqualTo(-1); // one rank: nothing to choose
        }
    }

    // --kv-events-hash engine for vLLM workers, end to end from the operator's template text to an exact
    // match: the events' hashes come from the Python goldens (hashlib or python-xxhash + cbor2, vLLM's recipe:
    // vllm-hash/block_hashes.json), not from the router's hasher, and their token_ids are empty, so only
    // the router's own computation of vLLM's chain over the request can find them.

    /** The golden case without a cache salt: seed, block size, sequence name, LoRA name or null. */
    static JsonNode golden(String seed, int blockSize, String sequence, String lora) throws Exception {
        return golden(seed, blockSize, sequence, lora, null);
    }

    /** The golden case: seed, block size, sequence name, LoRA name or null, cache salt or null. */
    static JsonNode golden(String seed, int blockSize, String sequence, String lora, String salt) throws Exception {
        for (JsonNode c : VllmBlockHashGoldenTest.goldens().get("cases")) {
            if (c.get("seed").asText().equals(seed) && c.get("block_size").asInt() == blockSize
                    && c.get("sequence").asText().equals(sequence) && Objects.equals(lora, VllmBlockHashGoldenTest.lora(c))
                    && Objects.equals(salt, VllmBlockHashGoldenTest.salt(c))) {
                return c;
            }
        }
        throw new IllegalStateException("no golden " + seed + "/" + blockSize + "/" + sequence + "/" + lora + "/" + salt);
    }

    private static Worker vllmWorker(VllmEngineFake engine, String hashParts) {
        return vllmWorker("http://127.0.0.1:8000", engine, hashParts);
    }

    private static Worker vllmWorker(String url, VllmEngineFake engine, String hashParts) {
        String template = "endpoint=" + engine.pubEndpoint + ";replay-endpoint=" + engine.replayEndpoint + ";topic="
                + "kv@pod@m" + ";block-size=4" + hashParts;
        return Worker.regular(url).withModelId("m").withEngine(EngineType.VLLM)
                .withKvEvents(KvEventsTemplate.parse(template).advert());
    }

    /** What the wiring does with the rule's verdict (plugin {@code KvEventsWiring.subscribe}). */
    private void subscribeAsTheWiringDoes(Worker w, Verdict verdict) {
        Verdict.Subscribe s = (Verdict.Subscribe) verdict;
        plane.addWorker(w.id(), w.url(), w.modelId(), s.advert().eventEndpoints(w.host()),
                s.advert().replayEndpoints(w.host()), s.advert().topic(), s.advert().blockSize(), s.hashMode(),
                s.vllmHash());
    }

    /** A BlockStored batch of the golden's wire hashes under {@code algo}, without token ids (engine keying). */
    private static byte[] stored(JsonNode golden, String algo, String lora) {
        return KvEventWire.vllmBatch(1.0, List.of(KvEventWire.stored(VllmBlockHashGoldenTest.wire(golden, algo), null,
                new int[0], 4, lora == null ? null : 1, lora)), 0); // vLLM's lora_id is the adapter's int id
    }

    @ParameterizedTest
    @ValueSource(strings = {"sha256_cbor", "xxhash_cbor"})
    void statedSeedAndCborAlgo_indexesEngineHashes_andARequestWithThoseTokensHits(String algo) throws Exception {
        JsonNode base = golden("42", 4, "small", null);
        JsonNode adapter = golden("42", 4, "small", "sql-lora");
        int[] tokens = VllmBlockHashGoldenTest.tokens(base);
        try (VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            engine.keep(stored(base, algo, null)); // history the catch-up replay brings
            engine.keep(stored(adapter, algo, "sql-lora"));
            start();
            Worker w = vllmWorker(engine, ";hash-algo=" + algo + ";hash-seed=42");
            Verdict verdict = new SubscriptionRule("engine").decide(w, 4);
            assertThat(verdict).isEqualTo(new Verdict.Subscribe(w.kvEvents(), KvHashMode.ENGINE, new VllmHashSpec(algo, "42")));
            subscribeAsTheWiringDoes(w, verdict);

            await().atMost(WAIT).until(() -> Long.valueOf(16).equals(exact.matchedTokens(List.of(w), tokens).get(w.id())));
            int[] divergent = tokens.clone();
            divergent[9] = 999; // the third block differs: two blocks of four match
            assertThat(exact.matchedTokens(List.of(w), divergent)).containsEntry(w.id(), 8L);
            assertThat(exact.matchedTokens(List.of(w), Arrays.copyOf(tokens, 14))).containsEntry(w.id(), 12L);
            assertThat(exact.matchedTokens(List.of(w), tokens, "sql-lora")).containsEntry(w.id(), 16L);
            assertThat(exact.matchedTokens(List.of(w), tokens, "other-lora")).containsEntry(w.id(), 0L);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sha256_cbor", "xxhash_cbor"})
    void anotherSeed_neverMatches(String algo) throws Exception {
        JsonNode seed0 = golden("0", 4, "small", null); // the engines run PYTHONHASHSEED=0
        int[] tokens = VllmBlockHashGoldenTest.tokens(seed0);
        try (VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            engine.keep(stored(seed0, algo, null));
            start();
            Worker w = vllmWorker(engine, ";hash-algo=" + algo + ";hash-seed=42"); // the operator states 42
            subscribeAsTheWiringDoes(w, new SubscriptionRule("engine").decide(w, 4));
            await().atMost(WAIT).until(() -> !engine.replayRequests.isEmpty()
                    && plane.snapshot().get(w.id()) != null && plane.snapshot().get(w.id()).live()
                    && registry.find("kvroute.kv.events.replays").tag("outcome", "completed").counter() != null
                    && registry.find("kvroute.kv.events.replays").tag("outcome", "completed").counter().count() >= 1);
            assertThat(exact.matchedTokens(List.of(w), tokens)).containsEntry(w.id(), 0L);
        }
    }

    /**
     * vLLM folds a request's {@code cache_salt} into the first block's extra keys, after the adapter's
     * name, so every hash of a salted chain differs: the stored chains (Python's, salted "tenant-a", one of
     * them under an adapter) match a lookup carrying that salt only; a request without it, with another
     * salt or with the empty salt (falsy in vLLM: no key) finds none of them, and a request whose second
     * block differs keeps the salted first block.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sha256_cbor", "xxhash_cbor"})
    void cacheSalt_matchesTheChainsOfThatSaltOnly(String algo) throws Exception {
        JsonNode salted = golden("42", 4, "small", null, "tenant-a");
        JsonNode saltedAdapter = golden("42", 4, "small", "sql-lora", "tenant-a");
        int[] tokens = VllmBlockHashGoldenTest.tokens(salted);
        PromptExtras tenantA = PromptExtras.of("tenant-a", null);
        try (VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            engine.keep(stored(salted, algo, null));
            engine.keep(stored(saltedAdapter, algo, "sql-lora"));
            start();
            Worker w = vllmWorker(engine, ";hash-algo=" + algo + ";hash-seed=42");
            subscribeAsTheWiringDoes(w, new SubscriptionRule("engine").decide(w, 4));

            await().atMost(WAIT).until(() -> Long.valueOf(16).equals(
                    exact.matchedTokens(List.of(w), tokens, null, tenantA).get(w.id())));
            assertThat(exact.matchedTokens(List.of(w), tokens, "sql-lora", tenantA)).containsEntry(w.id(), 16L);
            assertThat(exact.matchedTokens(List.of(w), tokens)).containsEntry(w.id(), 0L);
            assertThat(exact.matchedTokens(List.of(w), tokens, null, PromptExtras.of("tenant-b", null)))
                    .containsEntry(w.id(), 0L);
            assertThat(exact.matchedTokens(List.of(w), tokens, null, PromptExtras.of("", null)))
                    .containsEntry(w.id(), 0L);
            int[] divergent = tokens.clone();
            divergent[5] = 999; // the second block differs: the salted first one still matches
            assertThat(exact.matchedTokens(List.of(w), divergent, null, tenantA)).containsEntry(w.id(), 4L);
        }
    }

    /**
     * vLLM hashes multimodal items and prompt embeddings into the blocks they touch, which the router
     * cannot: such a lookup leaves an engine-hash worker out (no answer, so the tree answers in auto)
     * instead of answering for hashes the engine never computed, and counts why, once per lookup.
     */
    @Test
    void multimodalOrEmbedsRequest_leavesAnEngineHashWorkerOut_andIsCounted() throws Exception {
        JsonNode base = golden("42", 4, "small", null);
        int[] tokens = VllmBlockHashGoldenTest.tokens(base);
        try (VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            engine.keep(stored(base, "xxhash_cbor", null));
            start();
            Worker w = vllmWorker(engine, ";hash-algo=xxhash_cbor;hash-seed=42");
            subscribeAsTheWiringDoes(w, new SubscriptionRule("engine").decide(w, 4));
            await().atMost(WAIT).until(() -> Long.valueOf(16).equals(exact.matchedTokens(List.of(w), tokens).get(w.id())));

            assertThat(exact.matchedTokens(List.of(w), tokens, null, PromptExtras.of("tenant-a", PromptExtras.MULTIMODAL)))
                    .doesNotContainKey(w.id());
            assertThat(exact.matchedTokens(List.of(w), tokens, null, PromptExtras.of(null, PromptExtras.PROMPT_EMBEDS)))
                    .doesNotContainKey(w.id());
            assertThat(exact.bestRank(w, tokens, null, PromptExtras.of(null, PromptExtras.MULTIMODAL))).isEqualTo(-1);
            assertThat(count("kvroute.kv.events.lookups.declined", "reason", "multimodal")).isEqualTo(1);
            assertThat(count("kvroute.kv.events.lookups.declined", "reason", "prompt_embeds")).isEqualTo(1);
            assertThat(exact.matchedTokens(List.of(w), tokens)).containsEntry(w.id(), 16L);
            assertThat(count("kvroute.kv.events.lookups.declined", "reason", "multimodal")).isEqualTo(1);
        }
    }

    /**
     * A DP-2 engine whose rank 1 holds the salted chain and rank 0 the plain one: a request with the salt
     * is pinned to rank 1, one without it to rank 0.
     */
    @Test
    void bestRank_followsTheSalt() throws Exception {
        JsonNode plain = golden("42", 4, "small", null);
        JsonNode salted = golden("42", 4, "small", null, "tenant-a");
        int[] tokens = VllmBlockHashGoldenTest.tokens(plain);
        try (VllmEngineFake r0 = new VllmEngineFake(ctx, "kv@pod@m"); VllmEngineFake r1 = new VllmEngineFake(ctx, "kv@pod@m")) {
            r0.keep(stored(plain, "sha256_cbor", null));
            r1.keep(stored(salted, "sha256_cbor", null));
            start();
            Worker w = vllmWorker(r0, ";hash-algo=sha256_cbor;hash-seed=42");
            plane.addWorker(w.id(), w.url(), "m", List.of(r0.pubEndpoint, r1.pubEndpoint),
                    List.of(r0.replayEndpoint, r1.replayEndpoint), "kv@pod@m", 4, KvHashMode.ENGINE,
                    new VllmHashSpec("sha256_cbor", "42"));
            PromptExtras tenantA = PromptExtras.of("tenant-a", null);
            await().atMost(WAIT).until(() -> Long.valueOf(16).equals(exact.matchedTokens(List.of(w), tokens).get(w.id()))
                    && Long.valueOf(16).equals(exact.matchedTokens(List.of(w), tokens, null, tenantA).get(w.id())));
            assertThat(exact.bestRank(w, tokens)).isZero();
            assertThat(exact.bestRank(w, tokens, null, tenantA)).isEqualTo(1);
        }
    }

    /**
     * Two vLLM workers of one model whose engines hash differently (sha256_cbor, xxhash_cbor) share the
     * index's table: one lookup hashes the request once per hashing and matches each worker with its own
     * hashes, not with the first one's.
     */
    @Test
    void twoWorkersOfOneModel_hashingDifferently_eachMatchInOneLookup() throws Exception {
        JsonNode base = golden("42", 4, "small", null);
        int[] tokens = VllmBlockHashGoldenTest.tokens(base);
        try (VllmEngineFake sha = new VllmEngineFake(ctx, "kv@pod@m"); VllmEngineFake xxh = new VllmEngineFake(ctx, "kv@pod@m")) {
            sha.keep(stored(base, "sha256_cbor", null));
            xxh.keep(stored(base, "xxhash_cbor", null));
            start();
            Worker a = vllmWorker("http://127.0.0.1:8000", sha, ";hash-algo=sha256_cbor;hash-seed=42");
            Worker b = vllmWorker("http://127.0.0.1:8001", xxh, ";hash-algo=xxhash_cbor;hash-seed=42");
            subscribeAsTheWiringDoes(a, new SubscriptionRule("engine").decide(a, 4));
            subscribeAsTheWiringDoes(b, new SubscriptionRule("engine").decide(b, 4));
            await().atMost(WAIT).until(() -> exact.matchedTokens(List.of(a), tokens).getOrDefault(a.id(), -1L) == 16
                    && exact.matchedTokens(List.of(b), tokens).getOrDefault(b.id(), -1L) == 16);
            assertThat(exact.matchedTokens(List.of(a, b), tokens)).containsEntry(a.id(), 16L).containsEntry(b.id(), 16L);
            assertThat(exact.matchedTokens(List.of(b, a), tokens)).containsEntry(a.id(), 16L).containsEntry(b.id(), 16L);
        }
    }

    @Test
    void engineMode_refusesAVllmWorkerWithoutAStatedSeedOrReproducibleAlgo() throws Exception {
        try (VllmEngineFake engine = new VllmEngineFake(ctx, "kv@pod@m")) {
            SubscriptionRule rule = new SubscriptionRule("engine");
            for (String parts : List.of("", ";hash-algo=sha256_cbor", ";hash-algo=xxhash_cbor", ";hash-seed=42",
                    ";hash-algo=sha256;hash-seed=42", ";hash-algo=xxhash;hash-seed=42")) {
                Verdict v = rule.decide(vllmWorker(engine, parts), 4);
                assertThat(v).as(parts).isInstanceOf(Verdict.Refuse.class);
                Verdict.Refuse r = (Verdict.Refuse) v;
                assertThat(r.reason()).isEqualTo(SubscriptionRule.Refusal.ENGINE_HASH);
                assertThat(r.message()).as(parts).contains("sha256_cbor");
            }
            assertThat(((Verdict.Refuse) rule.decide(vllmWorker(engine, ""), 4)).message()).contains("hash-seed=");
            assertThat(((Verdict.Refuse) rule.decide(vllmWorker(engine, ";hash-algo=xxhash;hash-seed=42"), 4)).message())
                    .as("xxhash pickles the block").contains("pickle", "xxhash_cbor");
            Verdict auto = new SubscriptionRule("auto").decide(vllmWorker(engine, ";hash-algo=sha256_cbor;hash-seed=42"), 4);
            assertThat(auto).as("auto keeps vLLM on tokens").isEqualTo(new Verdict.Subscribe(
                    vllmWorker(engine, ";hash-algo=sha256_cbor;hash-seed=42").kvEvents(), KvHashMode.TOKENS));
        }
    }
}
