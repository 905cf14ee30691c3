package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Operator-stated KV-event endpoints: vLLM's --kv-events-config words in, SGLang's advert shape out. */
class KvEventsTemplateTest {

    @Test
    void vllmLayout_rankROnBasePlusR_forEventsAndReplay_onTheWorkersHost() {
        KvEventsAdvert advert = KvEventsTemplate.parse(
                "endpoint=tcp://*:5557;replay_endpoint=tcp://*:5600;topic=kv@qwen3;block-size=16;dp-size=2").advert();
        assertThat(advert.eventEndpoints("10.1.0.7")).containsExactly("tcp://10.1.0.7:5557", "tcp://10.1.0.7:5558");
        assertThat(advert.replayEndpoints("10.1.0.7")).containsExactly("tcp://10.1.0.7:5600", "tcp://10.1.0.7:5601");
        assertThat(advert.topic()).isEqualTo("kv@qwen3");
        assertThat(advert.blockSize()).isEqualTo(16);
        assertThat(advert.dpSize()).isEqualTo(2);
        assertThat(advert.loadEndpoints("10.1.0.7")).as("vLLM pushes no load").isEmpty();
    }

    /** A node serving ranks 2..3 (vLLM hybrid LB): its sockets at the shared bases + global rank. */
    @Test
    void dpStartRank_movesEventAndReplayPortsByTheStartRank_andReadsBack() {
        KvEventsTemplate t = KvEventsTemplate.parse(
                "endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;block-size=16;dp-size=2;dp_start_rank=2");
        assertThat(t.dpStartRank()).isEqualTo(2);
        assertThat(t.advert().eventEndpoints("10.1.0.8")).containsExactly("tcp://10.1.0.8:5559", "tcp://10.1.0.8:5560");
        assertThat(t.advert().replayEndpoints("10.1.0.8")).containsExactly("tcp://10.1.0.8:5602", "tcp://10.1.0.8:5603");
        assertThat(t.advert().dpSize()).as("the URL's own ranks only").isEqualTo(2);
        assertThat(KvEventsTemplate.parse(t.toString())).isEqualTo(t);
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16").dpStartRank()).isZero();
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;dp-size=4;"
                + "dp-hosts=2-3@10.0.0.12;dp-start-rank=4")).hasMessageContaining("dp-start-rank and dp-hosts");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;dp-start-rank=-1"))
                .hasMessageContaining("dp-start-rank must be");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:65534;block-size=16;dp-start-rank=2"))
                .hasMessageContaining("dp-start-rank 2").hasMessageContaining("does not fit");
    }

    @Test
    void hostPlaceholderAndWildcards_meanTheWorkersHost_aFixedHostIsKept() {
        for (String host : List.of("{host}", "*", "0.0.0.0", "[::]")) {
            assertThat(KvEventsTemplate.parse("endpoint=tcp://" + host + ":7000;block-size=32").advert()
                    .eventEndpoints("gpu-3")).as(host).containsExactly("tcp://gpu-3:7000");
        }
        assertThat(KvEventsTemplate.parse("endpoint=tcp://engine-host:7000;block-size=32").advert()
                .eventEndpoints("gpu-3")).containsExactly("tcp://engine-host:7000");
        assertThat(KvEventsTemplate.parse("endpoint=tcp://[fd00::7]:7000;block-size=32").advert()
                .eventEndpoints("gpu-3")).containsExactly("tcp://[fd00::7]:7000");
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:7000;block-size=32").advert().eventEndpoints("fd00::9"))
                .containsExactly("tcp://[fd00::9]:7000");
    }

    @Test
    void defaults_noReplay_emptyTopic_oneRank() {
        KvEventsTemplate t = KvEventsTemplate.parse(" endpoint = tcp://*:5557 ; block-size = 16 ");
        assertThat(t.advert().replayEndpoints("h")).isEmpty();
        assertThat(t.topic()).isEmpty();
        assertThat(t.dpSize()).isEqualTo(1);
        assertThat(KvEventsTemplate.parse(t.toString())).isEqualTo(t);
    }

    @Test
    void badTemplates_areRefusedNamingThePart() {
        assertThatThrownBy(() -> KvEventsTemplate.parse("block-size=16")).hasMessageContaining("endpoint is required");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557")).hasMessageContaining("block-size is required");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=ipc:///tmp/x;block-size=16")).hasMessageContaining("tcp://HOST:PORT");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:70000;block-size=16")).hasMessageContaining("1..65535");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:65535;block-size=16;dp-size=2"))
                .hasMessageContaining("does not fit");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=0")).hasMessageContaining("block-size");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hwm=5")).hasMessageContaining("unknown key 'hwm'");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;dp-size=x")).hasMessageContaining("whole number");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;endpoint=tcp://*:5558;block-size=16"))
                .hasMessageContaining("twice");
        // vLLM's own collision: replay base 5558 with dp 2 puts rank 0's replay on rank 1's PUB port
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:5557;replay-endpoint=tcp://*:5558;block-size=16;dp-size=2"))
                .hasMessageContaining("overlap");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://a:5557;replay-endpoint=tcp://b:5600;block-size=16"))
                .hasMessageContaining("differs");
    }

    /** vLLM's hashing stated for --kv-events-hash engine: carried to the advert, read back, checked. */
    @Test
    void hashAlgoAndSeed_reachTheAdvert_readBack_andBadValuesAreRefusedNamingTheKey() {
        KvEventsTemplate t = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;HASH_ALGO=SHA256_CBOR;hash-seed=042");
        assertThat(t.vllmHash()).isEqualTo(new VllmHashSpec("sha256_cbor", "042")); // the seed string as set
        assertThat(t.advert().vllmHash()).isEqualTo(t.vllmHash());
        assertThat(t.vllmHash().unreproducibleReason()).isNull();
        assertThat(KvEventsTemplate.parse(t.toString())).isEqualTo(t);
        assertThat(t.toString()).endsWith(";hash-algo=sha256_cbor;hash-seed=042");
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16").advert().vllmHash()).isNull();
        KvEventsTemplate seedOnly = KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;hash-seed=7");
        assertThat(seedOnly.vllmHash().unreproducibleReason()).contains("hash-algo=sha256_cbor");
        assertThat(KvEventsTemplate.parse(seedOnly.toString())).isEqualTo(seedOnly);
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-algo=sha256;hash-seed=1").vllmHash()
                .unreproducibleReason()).contains("pickle");
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-algo=xxhash;hash-seed=1").vllmHash()
                .unreproducibleReason()).contains("pickle");
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-algo=XXHASH_CBOR;hash-seed=1").vllmHash())
                .isEqualTo(new VllmHashSpec("xxhash_cbor", "1"))
                .satisfies(spec -> assertThat(spec.unreproducibleReason()).isNull());
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-algo=md5"))
                .hasMessageContaining("hash-algo");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-seed=random"))
                .hasMessageContaining("hash-seed").hasMessageContaining("PYTHONHASHSEED");
        assertThatThrownBy(() -> KvEventsTemplate.parse("endpoint=tcp://*:1;block-size=1;hash-seed=4294967296"))
                .hasMessageContaining("hash-seed");
        assertThat(KvEventsTemplates.parse(null, List.of("http://gpu-1:8000=endpoint=tcp://*:6000;block-size=16;"
                + "hash-algo=sha256_cbor;hash-seed=42")).apply(Worker.regular("http://gpu-1:8000")).kvEvents().vllmHash())
                .isEqualTo(new VllmHashSpec("sha256_cbor", "42"));
    }

    @Test
    void perUrlTemplate_winsOverTheDefault_urlsNormalized() {
        KvEventsTemplates t = KvEventsTemplates.parse("endpoint=tcp://*:5557;block-size=16",
                List.of("http://gpu-1:8000/=endpoint=tcp://*:6000;block-size=32;dp-size=2"));
        assertThat(t.forUrl("http://gpu-1:8000").blockSize()).isEqualTo(32);
        assertThat(t.forUrl("http://gpu-2:8000").blockSize()).isEqualTo(16);
        assertThat(t.apply(Worker.regular("http://gpu-1:8000")).kvEvents().eventEndpoints("gpu-1"))
                .containsExactly("tcp://gpu-1:6000", "tcp://gpu-1:6001");
        assertThat(KvEventsTemplates.parse(null, List.of()).apply(Worker.regular("http://gpu-1:8000")).kvEvents()).isNull();
        assertThatThrownBy(() -> KvEventsTemplates.parse(null, List.of("gpu-1=endpoint=tcp://*:1;block-size=1")))
                .hasMessageContaining("URL=TEMPLATE");
        assertThatThrownBy(() -> KvEventsTemplates.parse(null, List.of("http://a:1=endpoint=tcp://*:1")))
                .hasMessageContaining("http://a:1: block-size is required");
    }

    /**
     * vLLM multi-node data parallel: ranks 0-1 on the head node (the worker URL's host), ranks 2-3 on
     * a --headless node, each rank at base + its global rank on its own host (events and replay).
     */
    @Test
    void dpHosts_spreadOneWorkersRanksOverSeveralHosts_eachAtBasePlusItsGlobalRank() {
        KvEventsTemplate t = KvEventsTemplate.parse(
                "endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;block-size=16;dp-size=5;dp-hosts=2-3@10.0.0.12,4@[fd00::13]");
        KvEventsAdvert a = t.advert();
        assertThat(a.eventEndpoints("10.0.0.11")).containsExactly("tcp://10.0.0.11:5557", "tcp://10.0.0.11:5558",
                "tcp://10.0.0.12:5559", "tcp://10.0.0.12:5560", "tcp://[fd00::13]:5561");
        assertThat(a.replayEndpoints("10.0.0.11")).containsExactly("tcp://10.0.0.11:5600", "tcp://10.0.0.11:5601",
                "tcp://10.0.0.12:5602", "tcp://10.0.0.12:5603", "tcp://[fd00::13]:5604");
        assertThat(KvEventsTemplate.parse(t.toString())).isEqualTo(t);
        assertThat(KvEventsTemplate.parse("endpoint=tcp://*:5557;block-size=16;dp-size=2;dp_hosts=0@{host},1@gpu-b")
                .advert().eventEndpoints("gpu-a")).containsExactly("tcp://gpu-a:5557", "tcp://gpu-b:5558");
    }

    @Test
    void badDpHosts_areRefusedNamingTheKey() {
        String base = "endpoint=tcp://*:5557;block-size=16;dp-size=4;dp-hosts=";
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "2-3")).hasMessageContaining("dp-hosts entry '2-3'");
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "2-4@h")).hasMessageContaining("dp-hosts ranks '2-4'")
                .hasMessageContaining("0..3");
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "3-2@h")).hasMessageContaining("dp-hosts ranks '3-2'");
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "x@h")).hasMessageContaining("dp-hosts rank 'x'");
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "1-2@h,2@g")).hasMessageContaining("dp-hosts names rank 2 twice");
        assertThatThrownBy(() -> KvEventsTemplate.parse(base + "2@bad host")).hasMessageContaining("dp-hosts host");
    }
}
