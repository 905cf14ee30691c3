package io.kvroute.scheduler.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Encodes a KV-event batch in SGLang's format (SGLang {@code python/sglang/srt/disaggregation/kv_events.py}) or vLLM's:
 * {@code [ts, [events...], attn_dp_rank]} with tagged-array events
 * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]},
 * {@code ["BlockRemoved", block_hashes, medium]} and {@code ["AllBlocksCleared"]}. Stateless.
 */
final class KvEventEncoder {
    private KvEventEncoder() {}

    /** One event as the engine reports it; see the static factories. */
    record Event(String tag, long[] hashes, Long parentHash, int[] tokenIds, int blockSize, Integer loraId,
            String loraName) {}

    static byte[] batch(double ts, List<Event> events, int rank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3);
            p.packDouble(ts);
            p.packArrayHeader(events.size());
            for (Event e : events) {
                switch (e.tag()) {
                    case "BlockStored" -> {
                        p.packArrayHeader(7);
                        p.packString("BlockStored");
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
                        p.packString("GPU");
                    }
                    case "BlockRemoved" -> {
                        p.packArrayHeader(3);
                        p.packString("BlockRemoved");
                        packHashes(p, e.hashes());
                        p.packString("GPU");
                    }
                    default -> {
                        p.packArrayHeader(1);
                        p.packString("AllBlocksCleared");
                    }
                }
            }
            p.packInt(rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory msgpack packing failed", e);
        }
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
    static byte[] vllmBatch(double ts, List<Event> events, int rank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3);
            p.packDouble(ts);
            p.packArrayHeader(events.size());
            for (Event e : events) {
                switch (e.tag()) {
                    case "BlockStored" -> {
                        p.packMapHeader(e.loraName() == null ? 8 : 9);
                        p.packString("type").packString("BlockStored");
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
                        p.packString("medium").packString("GPU");
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
                    case "BlockRemoved" -> {
                        p.packMapHeader(3);
                        p.packString("type").packString("BlockRemoved");
                        p.packString("block_hashes");
                        packUnsignedHashes(p, e.hashes());
                        p.packString("medium").packString("GPU");
                    }
                    default -> p.packMapHeader(1).packString("type").packString("AllBlocksCleared");
                }
            }
            p.packInt(rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory msgpack packing failed", e);
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
}
