package io.kvroute.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * The engines' KV-event wire format, both directions in one place: the scheduler plugin's publisher
 * (and through it the mock engine) encodes, the router's events plane decodes. A live message is three
 * ZeroMQ frames {@code [topic, seq as 8-byte big-endian, msgpack KVEventBatch]}; the batch is
 * {@code [ts, [events...], attn_dp_rank]} (vLLM {@code vllm/distributed/kv_events.py}, SGLang
 * {@code python/sglang/srt/disaggregation/kv_events.py}).
 *
 * <p>Two event shapes. SGLang's (and older vLLM's) tagged arrays
 * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]},
 * {@code ["BlockRemoved", block_hashes, medium]} and {@code ["AllBlocksCleared"]}
 * ({@link #sglangBatch}); newer vLLM's maps keyed by {@code type} ({@link #vllmBatch}). The decoder
 * ({@link #decode}, {@link #decodePayload}) reads both, and is as lenient as the engines' own
 * consumers; see {@link KvEventReader} for what it accepts.
 *
 * <p>Replay: a subscriber sends {@code [b"", start_seq]} to the publisher's ROUTER socket and gets,
 * after the identity and the empty delimiter, every kept batch as {@link #replayAnswer} frames and
 * then {@link #replayEnd}; vLLM's shape puts the topic frame before the seq (empty in the end marker),
 * SGLang's has none.
 *
 * <p>Stateless and thread-safe. Golden vectors written by hand (not by this encoder) pin both
 * directions: {@code KvEventGoldenVectorsTest} in this module; vLLM's own captured bytes are checked
 * by the router's {@code VllmGoldenVectorsTest}.
 */
public final class KvEventWire {
    public static final String BLOCK_STORED = "BlockStored";
    public static final String BLOCK_REMOVED = "BlockRemoved";
    public static final String ALL_BLOCKS_CLEARED = "AllBlocksCleared";
    /** The seq of a replay's end marker. */
    public static final long END_SEQ = -1L;
    /** The only tier kvroute's engines publish. */
    private static final String MEDIUM = "GPU";

    private KvEventWire() {}

    /**
     * One event as an engine publishes it; build it with {@link #stored}, {@link #removed} or
     * {@link #cleared}. {@code loraId} and {@code loraName} are null for the base model.
     */
    public record Event(String tag, long[] hashes, Long parentHash, int[] tokenIds, int blockSize, Integer loraId,
            String loraName) {}

    /** Pages entered the cache as one chain; {@code parentHash} null at the root. */
    public static Event stored(long[] hashes, Long parentHash, int[] tokenIds, int blockSize, Integer loraId,
            String loraName) {
        return new Event(BLOCK_STORED, hashes, parentHash, tokenIds, blockSize, loraId, loraName);
    }

    public static Event removed(long[] hashes) {
        return new Event(BLOCK_REMOVED, hashes, null, null, 0, null, null);
    }

    public static Event cleared() {
        return new Event(ALL_BLOCKS_CLEARED, null, null, null, 0, null, null);
    }

    /** A dropped message; a value on the hot path, so no stack trace. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;
        public final KvMalformedReason reason;

        /** Public for the router's checks after decoding (block size, token keying), counted the same way. */
        public Malformed(KvMalformedReason reason) {
            super(reason.label(), null, false, false);
            this.reason = reason;
        }
    }

    /**
     * The batch in SGLang's encoding: tagged-array events, hashes as signed msgpack ints, {@code lora_id}
     * nil (SGLang's events carry no adapter), medium {@code "GPU"}.
     */
    public static byte[] sglangBatch(double ts, List<Event> events, int rank) {
        return batch(ts, events, rank, KvEventWire::packSglangEvent);
    }

    /**
     * The batch in vLLM's encoding ({@code vllm/distributed/kv_events.py}): msgspec structs with
     * {@code tag=True, omit_defaults=True}, so each event is a map whose first key is {@code type};
     * fields without a default ({@code block_hashes}, {@code parent_block_hash}, {@code token_ids},
     * {@code block_size}, {@code lora_id}, {@code medium}, {@code lora_name}) are always present (nil
     * when None); {@code extra_keys} is sent for a LoRA request's blocks only (the adapter name per block),
     * later fields are left out as None. Hashes are uint64, as vLLM
     * sends the low 64 bits of its digest.
     */
    public static byte[] vllmBatch(double ts, List<Event> events, int rank) {
        return batch(ts, events, rank, KvEventWire::packVllmEvent);
    }

    /** One event's shape inside the batch envelope. */
    private interface EventPacker {
        void pack(MessageBufferPacker p, Event e) throws IOException;
    }

    /** The envelope {@code [ts, [events...], rank]}, the same in both shapes. */
    private static byte[] batch(double ts, List<Event> events, int rank, EventPacker eventPacker) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3);
            p.packDouble(ts);
            p.packArrayHeader(events.size());
            for (Event e : events) {
                eventPacker.pack(p, e);
            }
            p.packInt(rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory msgpack packing failed", e);
        }
    }

    private static void packSglangEvent(MessageBufferPacker p, Event e) throws IOException {
        switch (e.tag()) {
            case BLOCK_STORED -> {
                p.packArrayHeader(7);
                p.packString(BLOCK_STORED);
                packHashes(p, e.hashes());
                if (e.parentHash() == null) {
                    p.packNil();
                } else {
                    p.packLong(e.parentHash());
                }
                p.packArrayHeader(e.tokenIds().length);
                for (int t : e.tokenIds()) {
                    p.packInt(t);
                }
                p.packInt(e.blockSize());
                p.packNil(); // lora_id
                p.packString(MEDIUM);
            }
            case BLOCK_REMOVED -> {
                p.packArrayHeader(3);
                p.packString(BLOCK_REMOVED);
                packHashes(p, e.hashes());
                p.packString(MEDIUM);
            }
            default -> {
                p.packArrayHeader(1);
                p.packString(ALL_BLOCKS_CLEARED);
            }
        }
    }

    private static void packVllmEvent(MessageBufferPacker p, Event e) throws IOException {
        switch (e.tag()) {
            case BLOCK_STORED -> {
                p.packMapHeader(e.loraName() == null ? 8 : 9);
                p.packString("type").packString(BLOCK_STORED);
                p.packString("block_hashes");
                packUnsignedHashes(p, e.hashes());
                p.packString("parent_block_hash");
                if (e.parentHash() == null) {
                    p.packNil();
                } else {
                    packUnsigned(p, e.parentHash());
                }
                p.packString("token_ids").packArrayHeader(e.tokenIds().length);
                for (int t : e.tokenIds()) {
                    p.packInt(t);
                }
                p.packString("block_size").packInt(e.blockSize());
                p.packString("lora_id");
                if (e.loraId() == null) {
                    p.packNil();
                } else {
                    p.packInt(e.loraId());
                }
                p.packString("medium").packString(MEDIUM);
                p.packString("lora_name");
                if (e.loraName() == null) {
                    p.packNil();
                } else {
                    p.packString(e.loraName());
                    // vLLM hashes the adapter's name into every block: extra_keys holds (lora_name,) per
                    // block (vllm/v1/core/kv_cache_utils.py _gen_lora_extra_hash_keys)
                    p.packString("extra_keys").packArrayHeader(e.hashes().length);
                    for (int i = 0; i < e.hashes().length; i++) {
                        p.packArrayHeader(1).packString(e.loraName());
                    }
                }
            }
            case BLOCK_REMOVED -> {
                p.packMapHeader(3);
                p.packString("type").packString(BLOCK_REMOVED);
                p.packString("block_hashes");
                packUnsignedHashes(p, e.hashes());
                p.packString("medium").packString(MEDIUM);
            }
            default -> p.packMapHeader(1).packString("type").packString(ALL_BLOCKS_CLEARED);
        }
    }

    private static void packUnsignedHashes(MessageBufferPacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            packUnsigned(p, h);
        }
    }

    /** The 64 bits as an unsigned msgpack int (a uint64 above 2^63 for a negative long). */
    private static void packUnsigned(MessageBufferPacker p, long h) throws IOException {
        if (h >= 0) {
            p.packLong(h);
        } else {
            p.packBigInteger(BigInteger.valueOf(h).add(BigInteger.ONE.shiftLeft(64)));
        }
    }

    private static void packHashes(MessageBufferPacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            p.packLong(h);
        }
    }

    /**
     * Decodes a live message {@code frames[0..count)}; the topic's value is not checked (the SUB filter
     * chose it). {@code withTokens} keeps each BlockStored's {@code token_ids}.
     */
    public static KvEventBatch decode(byte[][] frames, int count, boolean withTokens) throws Malformed {
        if (count != 3 || frames[1].length != Long.BYTES) {
            throw new Malformed(KvMalformedReason.BAD_FRAMES);
        }
        return decodePayload(ByteBuffer.wrap(frames[1]).getLong(), frames[2], withTokens);
    }

    /** One batch payload, without its {@code token_ids}. */
    public static KvEventBatch decodePayload(long seq, byte[] payload) throws Malformed {
        return KvEventReader.decodePayload(seq, payload, false);
    }

    /** One batch payload; {@code withTokens} keeps each BlockStored's {@code token_ids} (null when absent or nil). */
    public static KvEventBatch decodePayload(long seq, byte[] payload, boolean withTokens) throws Malformed {
        return KvEventReader.decodePayload(seq, payload, withTokens);
    }

    /**
     * The non-negative adapter id of a {@code lora_name}; the decoder gives it to blocks that name their
     * adapter, and wins over an engine's {@code lora_id} (a per-engine counter the router cannot see in a
     * request), so a request naming the adapter is keyed the same on every worker.
     */
    public static long loraIdOf(String loraName) {
        return KvEventReader.loraIdOf(loraName);
    }

    /**
     * The fold of a block's vLLM {@code extra_keys} entry made of {@code keys} (strings, in vLLM's order: the
     * adapter name, then the cache salt), as the decoder folds an event's entry: so a request that knows its
     * extra keys salts its own block hashes as the events' blocks are salted ({@code --kv-events-hash tokens}).
     */
    public static long extraKeysOf(List<String> keys) {
        return KvEventReader.extraKeysOf(keys);
    }

    /** The seq frame, 8 bytes big-endian, as the load report's. */
    public static byte[] seqFrame(long seq) {
        return LoadStatWire.seqFrame(seq);
    }

    /**
     * The frames of one replay answer after the identity: {@code [b"", topic, seq, payload]} with a
     * topic (vLLM), {@code [b"", seq, payload]} without (SGLang).
     */
    public static List<byte[]> replayAnswer(byte[] topic, long seq, byte[] payload) {
        return topic == null ? List.of(new byte[0], seqFrame(seq), payload)
                : List.of(new byte[0], topic, seqFrame(seq), payload);
    }

    /** The end marker after the identity: {@code [b"", b"", END, b""]} with a topic, {@code [b"", END, b""]} without. */
    public static List<byte[]> replayEnd(boolean withTopic) {
        return withTopic ? List.of(new byte[0], new byte[0], seqFrame(END_SEQ), new byte[0])
                : List.of(new byte[0], seqFrame(END_SEQ), new byte[0]);
    }

    /**
     * Where the seq frame of a replay answer received on a DEALER is (the payload follows it): both
     * shapes of {@link #replayAnswer} and {@link #replayEnd}, and {@code [seq, payload]} from a peer
     * without the delimiter; -1 when the frames are none of these or the seq frame is not 8 bytes.
     */
    public static int replaySeqIndex(byte[][] frames, int count) {
        int at;
        if (count == 4 && frames[0].length == 0) {
            at = 2;
        } else if (count == 3 && frames[0].length == 0) {
            at = 1;
        } else {
            at = count == 2 ? 0 : -1;
        }
        return at < 0 || frames[at].length != Long.BYTES ? -1 : at;
    }
}
