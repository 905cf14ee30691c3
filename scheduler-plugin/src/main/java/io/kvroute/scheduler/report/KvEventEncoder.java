package io.kvroute.scheduler.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Encodes a KV-event batch in SGLang's format (REFERENCE §8; SGLang {@code disaggregation/kv_events.py}):
 * {@code [ts, [events...], attn_dp_rank]} with tagged-array events
 * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium]},
 * {@code ["BlockRemoved", block_hashes, medium]} and {@code ["AllBlocksCleared"]}. Stateless.
 */
final class KvEventEncoder {
    private KvEventEncoder() {}

    /** One event as the engine reports it; see the static factories. */
    record Event(String tag, long[] hashes, Long parentHash, int[] tokenIds, int blockSize) {}

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

    private static void packHashes(MessageBufferPacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            p.packLong(h);
        }
    }
}
