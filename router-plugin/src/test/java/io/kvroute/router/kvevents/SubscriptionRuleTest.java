package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.kvevents.SubscriptionRule.Refusal;
import io.kvroute.router.kvevents.SubscriptionRule.Verdict;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.KvEventsTemplate;
import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.worker.Worker;
import org.junit.jupiter.api.Test;

/** Which workers' KV events feed the exact index, keyed how, and which are refused loudly. */
class SubscriptionRuleTest {
    private static final KvEventsAdvert TEMPLATE =
            KvEventsTemplate.parse("endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;block-size=16;dp-size=2").advert();

    private static Worker worker(EngineType engine, KvEventsAdvert advert) {
        Worker w = Worker.regular("http://127.0.0.1:8000").withKvEvents(advert);
        return engine == null ? w : w.withEngine(engine);
    }

    private static Refusal refusal(Verdict v) {
        assertThat(v).isInstanceOf(Verdict.Refuse.class);
        return ((Verdict.Refuse) v).reason();
    }

    private static KvHashMode mode(Verdict v) {
        assertThat(v).isInstanceOf(Verdict.Subscribe.class);
        return ((Verdict.Subscribe) v).hashMode();
    }

    @Test
    void auto_keysVllmByTokens_othersByEngineHashes_waitsWhileTheEngineIsUnknown() {
        SubscriptionRule auto = new SubscriptionRule("auto");
        assertThat(mode(auto.decide(worker(EngineType.VLLM, TEMPLATE), 0))).isEqualTo(KvHashMode.TOKENS);
        assertThat(mode(auto.decide(worker(EngineType.SGLANG, TEMPLATE), 0))).isEqualTo(KvHashMode.ENGINE);
        assertThat(auto.decide(worker(null, TEMPLATE), 0)).isInstanceOf(Verdict.Wait.class);
        assertThat(mode(new SubscriptionRule("tokens").decide(worker(EngineType.SGLANG, TEMPLATE), 0)))
                .isEqualTo(KvHashMode.TOKENS);
    }

    @Test
    void engineHashes_forAVllmWorker_areRefusedUnlessACborAlgorithmAndTheSeedAreStated() {
        SubscriptionRule engine = new SubscriptionRule("ENGINE");
        assertThat(refusal(engine.decide(worker(EngineType.VLLM, TEMPLATE), 16))).isEqualTo(Refusal.ENGINE_HASH);
        KvEventsAdvert stated = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hash-algo=sha256_cbor;"
                + "hash-seed=42").advert();
        assertThat(engine.decide(worker(EngineType.VLLM, stated), 16))
                .isEqualTo(new Verdict.Subscribe(stated, KvHashMode.ENGINE, new VllmHashSpec("sha256_cbor", "42")));
        KvEventsAdvert xxh3 = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hash-algo=xxhash_cbor;"
                + "hash-seed=7").advert();
        assertThat(engine.decide(worker(EngineType.VLLM, xxh3), 16))
                .isEqualTo(new Verdict.Subscribe(xxh3, KvHashMode.ENGINE, new VllmHashSpec("xxhash_cbor", "7")));
        assertThat(engine.decide(worker(EngineType.SGLANG, stated), 16)).as("SGLang's own page hash, no vLLM seed")
                .isEqualTo(new Verdict.Subscribe(stated, KvHashMode.ENGINE));
        KvEventsAdvert pickle = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hash-algo=sha256;"
                + "hash-seed=42").advert();
        assertThat(refusal(engine.decide(worker(EngineType.VLLM, pickle), 16))).isEqualTo(Refusal.ENGINE_HASH);
        KvEventsAdvert xxhashPickle = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hash-algo=xxhash;"
                + "hash-seed=42").advert();
        assertThat(refusal(engine.decide(worker(EngineType.VLLM, xxhashPickle), 16))).isEqualTo(Refusal.ENGINE_HASH);
        assertThat(mode(engine.decide(worker(EngineType.SGLANG, TEMPLATE), 0))).isEqualTo(KvHashMode.ENGINE);
        assertThat(mode(engine.decide(worker(null, TEMPLATE), 0))).as("SGLang until told otherwise").isEqualTo(KvHashMode.ENGINE);
    }

    @Test
    void blockSize_confirmedByTheEngine_orRefusedOnMismatch() {
        SubscriptionRule auto = new SubscriptionRule("auto");
        assertThat(mode(auto.decide(worker(EngineType.VLLM, TEMPLATE), 16))).isEqualTo(KvHashMode.TOKENS);
        assertThat(refusal(auto.decide(worker(EngineType.VLLM, TEMPLATE), 32))).isEqualTo(Refusal.BLOCK_SIZE_MISMATCH);
        assertThat(((Verdict.Refuse) auto.decide(worker(EngineType.VLLM, TEMPLATE), 32)).message())
                .contains("block-size 16", "block_size 32");
    }

    @Test
    void noRange_isNone_noBlockSize_andBigramPages_areRefused() {
        SubscriptionRule auto = new SubscriptionRule("auto");
        assertThat(auto.decide(worker(EngineType.VLLM, null), 16)).isInstanceOf(Verdict.None.class);
        assertThat(refusal(auto.decide(worker(EngineType.SGLANG,
                new KvEventsAdvert("*", 5557, "kv", 0, 1, null, null, null)), 0))).isEqualTo(Refusal.NO_BLOCK_SIZE);
        assertThat(refusal(auto.decide(worker(EngineType.SGLANG,
                new KvEventsAdvert("*", 5557, "kv", 64, 1, null, null, null, "EAGLE3")), 0))).isEqualTo(Refusal.BIGRAM_PAGES);
    }
}
