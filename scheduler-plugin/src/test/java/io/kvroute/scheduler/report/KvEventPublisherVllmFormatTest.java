package io.kvroute.scheduler.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The publisher in vLLM's shape ({@code vllm/distributed/kv_events.py}), read back with a plain
 * msgpack decoder and a DEALER as vLLM's own test client reads replays.
 */
class KvEventPublisherVllmFormatTest {

    private static List<byte[]> recvMultipart(ZMQ.Socket s) {
        List<byte[]> frames = new ArrayList<>();
        byte[] f = s.recv(0);
        if (f == null) {
            throw new AssertionError("no answer");
        }
        frames.add(f);
        while (s.hasReceiveMore()) {
            frames.add(s.recv(0));
        }
        return frames;
    }

    private static int eventCount(List<List<byte[]>> answers) throws Exception {
        int n = 0;
        for (List<byte[]> a : answers) {
            n += MessagePack.newDefaultUnpacker(a.get(a.size() - 1)).unpackValue().asArrayValue().get(1).asArrayValue().size();
        }
        return n;
    }

    @Test
    void vllmFormat_mapEventsUint64Hashes_topicFrameInReplay_noHeartbeat() throws Exception {
        try (ZContext ctx = new ZContext(1);
             KvEventPublisher pub = KvEventPublisher.bind("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", 2, "kv@pod@m",
                     KvEventPublisher.Options.defaults().withHeartbeatNanos(1).withFormat(KvEventFormat.VLLM))) {
            pub.blockStored(1, new long[] {-2L, 7L}, null, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4);
            pub.blockRemoved(1, new long[] {7L});
            ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
            dealer.setReceiveTimeOut(20_000);
            // a connecting JeroMQ socket stalls in the handshake now and then until this interval (default 30 s)
            dealer.setHandshakeIvl(2_000);
            dealer.connect(pub.replayEndpoints().get(1));
            List<List<byte[]>> answers = new ArrayList<>();
            // ask until both events went out (the publisher thread batches them), each answer ends with the marker
            while (eventCount(answers) < 2) {
                answers.clear();
                dealer.sendMore(new byte[0]);
                dealer.send(ByteBuffer.allocate(8).putLong(0).array());
                for (List<byte[]> m = recvMultipart(dealer); m.get(1).length > 0; m = recvMultipart(dealer)) {
                    answers.add(m);
                }
            }
            // with a 1 ns heartbeat an SGLang-format publisher would have sent empty batches first: none here
            List<Value> events = new ArrayList<>();
            long expectedSeq = 0;
            for (List<byte[]> a : answers) {
                assertThat(a).hasSize(4);
                assertThat(a.get(0)).isEmpty();
                assertThat(new String(a.get(1))).isEqualTo("kv@pod@m");
                assertThat(ByteBuffer.wrap(a.get(2)).getLong()).isEqualTo(expectedSeq++);
                Value batch = MessagePack.newDefaultUnpacker(a.get(3)).unpackValue();
                assertThat(batch.asArrayValue().size()).isEqualTo(3);
                assertThat(batch.asArrayValue().get(2).asIntegerValue().asInt()).isEqualTo(1);
                assertThat(batch.asArrayValue().get(1).asArrayValue().size()).isPositive();
                batch.asArrayValue().get(1).asArrayValue().forEach(events::add);
            }
            assertThat(events).hasSize(2);
            var stored = events.get(0).asMapValue();
            assertThat(stored.keySet().iterator().next().asStringValue().asString()).isEqualTo("type");
            assertThat(stored.map().get(ValueFactory.newString("type")).toString()).isEqualTo("BlockStored");
            Value hashes = stored.map().get(ValueFactory.newString("block_hashes"));
            assertThat(hashes.asArrayValue().get(0).asIntegerValue().asBigInteger())
                    .isEqualTo(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.TWO)); // uint64, not -2
            assertThat(stored.map().get(ValueFactory.newString("parent_block_hash")).isNilValue()).isTrue();
            assertThat(stored.map().get(ValueFactory.newString("medium")).toString()).isEqualTo("GPU");
            assertThat(stored.map()).containsKey(ValueFactory.newString("lora_name"));
            assertThat(stored.map()).doesNotContainKey(ValueFactory.newString("extra_keys"));
            assertThat(events.get(1).asMapValue().map().get(ValueFactory.newString("type")).toString())
                    .isEqualTo("BlockRemoved");
            // the end marker: [b"", b"", END, b""]
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(99).array());
            List<byte[]> end = recvMultipart(dealer);
            assertThat(end).hasSize(4);
            assertThat(end.get(1)).isEmpty();
            assertThat(ByteBuffer.wrap(end.get(2)).getLong()).isEqualTo(-1L);
            assertThat(end.get(3)).isEmpty();
        }
    }
}
