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
import io.kvroute.protocol.PageHash;
import io.kvroute.router.discovery.ReconcileAction;
import io.kvroute.router.kvevents.ExactCacheIndex;
import io.kvroute.router.worker.WorkerRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Which advertised or templated workers the exact index subscribes, and the refusals it counts. */
class KvEventsWiringTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);

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

    /**
     * One engine rank's PUB side as an XPUB, so the test sees the router's SUB arrive (a subscribe
     * message) and leave (the unsubscribe JeroMQ delivers when the subscriber's connection closes).
     */
    private static final class XpubEngine implements AutoCloseable {
        final ZMQ.Socket xpub;
        final int port;
        private int subscribers;

        XpubEngine(ZContext ctx) {
            this(ctx, "tcp://127.0.0.1:*");
        }

        XpubEngine(ZContext ctx, String bind) {
            xpub = ctx.createSocket(SocketType.XPUB);
            xpub.bind(bind);
            String endpoint = xpub.getLastEndpoint();
            port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
        }

        /** Subscribers connected now, after reading every (un)subscribe message that arrived. */
        int subscribers() {
            byte[] msg;
            while ((msg = xpub.recv(ZMQ.DONTWAIT)) != null) {
                if (msg.length > 0) {
                    subscribers += msg[0] == 1 ? 1 : -1;
                }
            }
            return subscribers;
        }

        /** An SGLang-shaped batch at {@code seq}: one BlockStored of {@code hashes} on GPU. */
        void store(long seq, long[] hashes) throws Exception {
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packArrayHeader(3).packDouble(0).packArrayHeader(1);
                p.packArrayHeader(7).packString("BlockStored").packArrayHeader(hashes.length);
                for (long h : hashes) {
                    p.packLong(h);
                }
                p.packNil().packArrayHeader(0).packInt(4).packNil().packString("GPU");
                p.packInt(0);
                xpub.sendMore("kv");
                xpub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
                xpub.send(p.toByteArray());
            }
        }

        @Override
        public void close() {
            xpub.close();
        }
    }

    /**
     * A discovered worker's KV-event annotation moves to other endpoints while it stays registered
     * (the reconciler's {@link ReconcileAction.KvEvents}), over real JeroMQ sockets: its blocks from
     * the old endpoint stop answering, the old SUB socket closes, events on the new endpoint reach
     * the index; the annotation removed (no default) unsubscribes it.
     */
    @Test
    void templateChangedAfterJoin_resubscribesToTheNewEndpoint_andForgetsTheOldBlocks() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (ZContext ctx = new ZContext(1); XpubEngine old = new XpubEngine(ctx); XpubEngine moved = new XpubEngine(ctx);
                KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, meters, null)) {
            plane.start();
            KvEventsWiring wiring = new KvEventsWiring(plane, "auto", meters);
            ExactCacheIndex exact = new ExactCacheIndex(plane);
            WorkerRegistry registry = new WorkerRegistry();
            registry.addListener(change -> { // as KvRouter wires it
                if (change.kind() == WorkerRegistry.ChangeKind.ADDED || change.kind() == WorkerRegistry.ChangeKind.UPDATED) {
                    wiring.subscribe(change.worker());
                }
            });
            int[] tokens = {5, 6, 7, 8, 9, 10, 11, 12};
            long[] hashes = new PageHash(4).hashes(tokens, tokens.length);
            Worker joined = Worker.regular("http://127.0.0.1:30010").withModelId("m").withEngine(EngineType.SGLANG)
                    .withKvEvents(KvEventsTemplate.parse("endpoint=tcp://*:" + old.port + ";topic=kv;block-size=4").advert());
            registry.add(joined);
            java.util.function.Supplier<Long> matched = () -> exact.matchedTokens(
                    List.of(registry.get(joined.id()).orElseThrow()), tokens).get(joined.id());
            await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
                if (old.subscribers() == 1 && Long.valueOf(8).equals(matched.get())) {
                    return true;
                }
                old.store(0, hashes); // resent through the slow joiner; a duplicate is stale
                return false;
            });

            new ReconcileAction.KvEvents(joined.id(), KvEventsTemplate.parse("endpoint=tcp://*:" + moved.port
                    + ";topic=kv;block-size=4").advert()).applyTo(registry);
            await().atMost(WAIT).pollInSameThread().until(() -> Long.valueOf(0).equals(matched.get()));
            await().atMost(WAIT).pollInSameThread().until(() -> old.subscribers() == 0 && moved.subscribers() == 1);
            await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
                if (Long.valueOf(8).equals(matched.get())) {
                    return true;
                }
                moved.store(0, hashes);
                return false;
            });

            new ReconcileAction.KvEvents(joined.id(), null).applyTo(registry);
            await().atMost(WAIT).pollInSameThread().until(() -> plane.snapshot().get(joined.id()) == null
                    && moved.subscribers() == 0);
            assertThat(matched.get()).isNull();
        }
    }

    /**
     * One worker's two data-parallel ranks on two hosts (vLLM --headless: rank 1 on another node, at
     * base + 1 there), stated by the template's dp-hosts: each rank's SUB connects to its own host,
     * and a block published by rank 1 is found on rank 1.
     */
    @Test
    void dpHostsTemplate_subscribesEachRankOnItsOwnHost() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (ZContext ctx = new ZContext(1); XpubEngine head = new XpubEngine(ctx);
                XpubEngine headless = new XpubEngine(ctx, "tcp://127.0.0.2:" + (head.port + 1));
                KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults(), System::nanoTime, meters, null)) {
            plane.start();
            KvEventsWiring wiring = new KvEventsWiring(plane, "auto", meters);
            Worker worker = Worker.regular("http://127.0.0.1:30011").withModelId("m").withEngine(EngineType.SGLANG)
                    .withKvEvents(KvEventsTemplate.parse("endpoint=tcp://*:" + head.port
                            + ";topic=kv;block-size=4;dp-size=2;dp-hosts=1@127.0.0.2").advert());
            wiring.subscribe(worker);
            int[] tokens = {5, 6, 7, 8};
            long[] hashes = new PageHash(4).hashes(tokens, tokens.length);
            ExactCacheIndex exact = new ExactCacheIndex(plane);
            await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
                if (head.subscribers() == 1 && headless.subscribers() == 1 && exact.bestRank(worker, tokens) == 1) {
                    return true;
                }
                headless.store(0, hashes);
                return false;
            });
            assertThat(exact.matchedTokens(List.of(worker), tokens).get(worker.id())).isEqualTo(4);
        }
    }
}
