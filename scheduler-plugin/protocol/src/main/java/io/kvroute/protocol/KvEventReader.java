package io.kvroute.protocol;

import static io.kvroute.protocol.KvEventWire.ALL_BLOCKS_CLEARED;
import static io.kvroute.protocol.KvEventWire.BLOCK_REMOVED;
import static io.kvroute.protocol.KvEventWire.BLOCK_STORED;

import io.kvroute.protocol.KvEventWire.Malformed;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.msgpack.value.ValueType;

/**
 * The decoding half of {@link KvEventWire}: one msgpack {@code KVEventBatch} payload
 * {@code [ts, [events...], data_parallel_rank?]} (vLLM {@code vllm/distributed/kv_events.py}). Each
 * event is either a tagged array ({@code ["BlockStored", block_hashes, parent_block_hash, token_ids,
 * block_size, lora_id, medium, ...]}, SGLang and older vLLM) or a map with a {@code type} key (newer
 * vLLM, {@code omit_defaults}: absent keys are defaults). Hashes are msgpack ints (any width; a uint64
 * above 2^63 keeps its bits) or bytes of at least 8 (last 8 bytes, big-endian). {@code medium},
 * {@code lora_name}, {@code extra_keys}, {@code group_idx} and {@code kv_cache_spec_kind} are kept for
 * the router's filters and keys; later fields and unknown keys are skipped; {@code token_ids} are
 * skipped unless asked for ({@code withTokens}), since SGLang's hashes are reproducible from the
 * request's own tokens. A token id must be an integer in {@code [0, 2^31)}.
 *
 * <p>Anything else is a {@link Malformed} with a {@link KvMalformedReason}; nothing else is thrown,
 * and no array is sized beyond the payload's byte count. Stateless and thread-safe.
 */
final class KvEventReader {
    private KvEventReader() {}

    /** One payload; {@code withTokens} keeps each BlockStored's {@code token_ids} (null when absent or nil). */
    static KvEventBatch decodePayload(long seq, byte[] payload, boolean withTokens) throws Malformed {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            if (!u.hasNext()) {
                throw new Malformed(KvMalformedReason.TRUNCATED);
            }
            MessageFormat head = u.getNextFormat();
            if (head == MessageFormat.NEVER_USED) {
                throw new Malformed(KvMalformedReason.GARBAGE);
            }
            if (head.getValueType() != ValueType.ARRAY) {
                throw new Malformed(KvMalformedReason.BAD_BATCH);
            }
            int n = u.unpackArrayHeader();
            if (n < 2) {
                throw new Malformed(KvMalformedReason.BAD_BATCH);
            }
            ValueType tsType = u.getNextFormat().getValueType();
            double ts;
            if (tsType == ValueType.FLOAT) {
                ts = u.unpackDouble();
            } else if (tsType == ValueType.INTEGER) {
                ts = u.unpackLong();
            } else {
                throw new Malformed(KvMalformedReason.BAD_BATCH);
            }
            if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
                throw new Malformed(KvMalformedReason.BAD_BATCH);
            }
            int events = boundedCount(u.unpackArrayHeader(), payload);
            List<KvEvent> out = new ArrayList<>(events);
            for (int i = 0; i < events; i++) {
                out.add(event(u, payload, withTokens));
            }
            int rank = -1;
            if (n >= 3) {
                MessageFormat f = u.getNextFormat();
                if (f == MessageFormat.NIL) {
                    u.unpackNil();
                } else if (f.getValueType() == ValueType.INTEGER) {
                    long r = u.unpackLong();
                    if (r < 0 || r > Integer.MAX_VALUE) {
                        throw new Malformed(KvMalformedReason.BAD_FIELD);
                    }
                    rank = (int) r;
                } else {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                for (int extra = n - 3; extra > 0; extra--) {
                    u.skipValue();
                }
            }
            if (u.hasNext()) {
                throw new Malformed(KvMalformedReason.GARBAGE);
            }
            return new KvEventBatch(seq, ts, List.copyOf(out), rank);
        } catch (MessageInsufficientBufferException e) {
            throw new Malformed(KvMalformedReason.TRUNCATED);
        } catch (IOException | RuntimeException e) {
            throw new Malformed(KvMalformedReason.GARBAGE);
        }
    }

    private static KvEvent event(MessageUnpacker u, byte[] payload, boolean withTokens) throws IOException, Malformed {
        ValueType t = u.getNextFormat().getValueType();
        if (t == ValueType.ARRAY) {
            return arrayEvent(u, payload, withTokens);
        }
        if (t == ValueType.MAP) {
            return mapEvent(u, payload, withTokens);
        }
        throw new Malformed(KvMalformedReason.BAD_FIELD);
    }

    /** The fields of one event as they are read, in either encoding. */
    private static final class Fields {
        String tag;
        long[] hashes;
        int[] tokens;
        Long parent;
        int blockSize;
        long lora = -1;
        String loraName;
        String medium;
        int groupIdx = -1;
        String specKind;
        long[] extraKeys;

        KvEvent build() throws Malformed {
            long[] h = hashes == null ? new long[0] : hashes;
            if (loraName != null && extraKeys != null) {
                extraKeys = withoutAdapterOnlyKeys(extraKeys, loraName);
            }
            return switch (tag) {
                case BLOCK_STORED -> new KvEvent.BlockStored(h, parent != null, parent == null ? 0 : parent, blockSize,
                        loraName != null ? loraIdOf(loraName) : lora, tokens, medium, groupIdx, specKind,
                        extraKeys);
                case BLOCK_REMOVED -> new KvEvent.BlockRemoved(h, medium, groupIdx);
                case ALL_BLOCKS_CLEARED -> new KvEvent.AllBlocksCleared();
                default -> throw new Malformed(KvMalformedReason.UNKNOWN_EVENT);
            };
        }
    }

    /** Positions of BlockStored's fields in the tagged-array form (vLLM before its map encoding, SGLang). */
    private static final String[] STORED_ORDER = {"block_hashes", "parent_block_hash", "token_ids", "block_size",
        "lora_id", "medium", "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind"};
    private static final String[] REMOVED_ORDER = {"block_hashes", "medium", "group_idx"};

    /** {@code [tag, fields...]} in vLLM's declaration order; missing trailing fields take defaults. */
    private static KvEvent arrayEvent(MessageUnpacker u, byte[] payload, boolean withTokens)
            throws IOException, Malformed {
        int n = u.unpackArrayHeader();
        if (n < 1 || u.getNextFormat().getValueType() != ValueType.STRING) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        Fields f = new Fields();
        f.tag = u.unpackString();
        String[] order = switch (f.tag) {
            case BLOCK_STORED -> STORED_ORDER;
            case BLOCK_REMOVED -> REMOVED_ORDER;
            case ALL_BLOCKS_CLEARED -> new String[0];
            default -> throw new Malformed(KvMalformedReason.UNKNOWN_EVENT);
        };
        if (f.tag.equals(BLOCK_STORED) && n < 3 || f.tag.equals(BLOCK_REMOVED) && n < 2) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        for (int i = 1; i < n; i++) {
            if (i - 1 < order.length) {
                field(f, order[i - 1], u, payload, withTokens);
            } else {
                u.skipValue(); // later optional fields
            }
        }
        return f.build();
    }

    /** {@code {"type": tag, field: value, ...}} in any key order; absent fields are defaults; unknown keys skipped. */
    private static KvEvent mapEvent(MessageUnpacker u, byte[] payload, boolean withTokens)
            throws IOException, Malformed {
        int n = u.unpackMapHeader();
        Fields f = new Fields();
        for (int i = 0; i < n; i++) {
            if (u.getNextFormat().getValueType() != ValueType.STRING) {
                throw new Malformed(KvMalformedReason.BAD_FIELD);
            }
            String key = u.unpackString();
            if (key.equals("type")) {
                if (u.getNextFormat().getValueType() != ValueType.STRING) {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                f.tag = u.unpackString();
            } else {
                field(f, key, u, payload, withTokens);
            }
        }
        if (f.tag == null) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return f.build();
    }

    private static void field(Fields f, String key, MessageUnpacker u, byte[] payload, boolean withTokens)
            throws IOException, Malformed {
        switch (key) {
            case "block_hashes" -> f.hashes = hashList(u, payload);
            case "parent_block_hash" -> f.parent = optionalHash(u);
            case "block_size" -> f.blockSize = blockSize(u);
            case "lora_id" -> f.lora = optionalNonNegative(u);
            case "token_ids" -> f.tokens = tokenIds(u, payload, withTokens);
            case "medium" -> f.medium = optionalString(u);
            case "lora_name" -> f.loraName = optionalString(u);
            case "group_idx" -> {
                long g = optionalNonNegative(u);
                if (g > Integer.MAX_VALUE) {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                f.groupIdx = (int) g;
            }
            case "kv_cache_spec_kind" -> f.specKind = optionalString(u);
            case "extra_keys" -> f.extraKeys = extraKeys(u, payload);
            default -> u.skipValue();
        }
    }

    private static String optionalString(MessageUnpacker u) throws IOException, Malformed {
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.NIL) {
            u.unpackNil();
            return null;
        }
        if (f.getValueType() != ValueType.STRING) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return u.unpackString();
    }

    /**
     * vLLM's {@code extra_keys}: nil, or one entry per block, each nil or a tuple of what vLLM hashed
     * into that block besides its tokens (vLLM {@code vllm/v1/core/kv_cache_utils.py}
     * {@code generate_block_hash_extra_keys}). Each entry is folded to a non-zero 64-bit value (0 =
     * none) that keys the block apart; its meaning is not interpreted.
     */
    private static long[] extraKeys(MessageUnpacker u, byte[] payload) throws IOException, Malformed {
        int n = arrayOrNil(u, payload);
        if (n < 0) {
            return null;
        }
        long[] out = new long[n];
        boolean any = false;
        for (int i = 0; i < n; i++) {
            if (u.getNextFormat() == MessageFormat.NIL) {
                u.unpackNil();
                continue;
            }
            out[i] = fold(u.unpackValue());
            any = true;
        }
        return any ? out : null;
    }

    /**
     * {@code extra} without the entries whose only extra key is the adapter name: vLLM puts a LoRA
     * request's {@code lora_name} first in every block's extra keys (vLLM
     * {@code vllm/v1/core/kv_cache_utils.py} {@code _gen_lora_extra_hash_keys}); the adapter is already
     * the block's {@code loraId}, which a request naming the adapter reproduces, so salting with it
     * again would make adapter blocks unmatchable. Entries with more (cache salt, multimodal) stay.
     */
    private static long[] withoutAdapterOnlyKeys(long[] extra, String loraName) {
        long adapterOnly = extraKeysOf(List.of(loraName));
        long[] out = extra.clone();
        boolean any = false;
        for (int i = 0; i < out.length; i++) {
            if (out[i] == adapterOnly) {
                out[i] = 0;
            }
            any |= out[i] != 0;
        }
        return any ? out : null;
    }

    /** A block's extra keys of strings (a request's adapter name, cache salt) folded as {@link #extraKeys} folds them. */
    static long extraKeysOf(List<String> keys) {
        Value[] values = new Value[keys.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = ValueFactory.newString(keys.get(i));
        }
        return fold(ValueFactory.newArray(values));
    }

    /** One extra-keys entry folded to a non-zero 64-bit value: FNV-1a of its JSON form. */
    private static long fold(Value entry) {
        long h = fnv64(entry.toJson());
        return h == 0 ? 1 : h;
    }

    /** The element count of an array field (bounded by the payload), or -1 for nil; anything else is a bad field. */
    private static int arrayOrNil(MessageUnpacker u, byte[] payload) throws IOException, Malformed {
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.NIL) {
            u.unpackNil();
            return -1;
        }
        if (f.getValueType() != ValueType.ARRAY) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return boundedCount(u.unpackArrayHeader(), payload);
    }

    /** See {@link KvEventWire#loraIdOf}. */
    static long loraIdOf(String loraName) {
        return (fnv64(loraName) >>> 1) | (1L << 61); // never -1 (none) and apart from small engine ids
    }

    private static long fnv64(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        return h;
    }

    private static long[] hashList(MessageUnpacker u, byte[] payload) throws IOException, Malformed {
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        int n = boundedCount(u.unpackArrayHeader(), payload);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = hash(u);
        }
        return out;
    }

    /** {@code token_ids} when {@code keep}, else skipped (null); null for nil. */
    private static int[] tokenIds(MessageUnpacker u, byte[] payload, boolean keep) throws IOException, Malformed {
        if (!keep) {
            u.skipValue();
            return null;
        }
        int n = arrayOrNil(u, payload);
        if (n < 0) {
            return null;
        }
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            MessageFormat t = u.getNextFormat();
            if (t.getValueType() != ValueType.INTEGER || t == MessageFormat.UINT64) {
                throw new Malformed(KvMalformedReason.BAD_FIELD);
            }
            long v = u.unpackLong();
            if (v < 0 || v > Integer.MAX_VALUE) {
                throw new Malformed(KvMalformedReason.BAD_FIELD);
            }
            out[i] = (int) v;
        }
        return out;
    }

    private static Long optionalHash(MessageUnpacker u) throws IOException, Malformed {
        if (u.getNextFormat() == MessageFormat.NIL) {
            u.unpackNil();
            return null;
        }
        return hash(u);
    }

    /**
     * An int hash (any width; a uint64 keeps its bits) or a bytes hash of at least 8 bytes (vLLM's
     * digests are 16 or 32 bytes), folded to its last 8 bytes big-endian, the integer vLLM would
     * have sent. A string or a shorter binary is not a hash (SGLang's decoder refuses both too).
     */
    private static long hash(MessageUnpacker u) throws IOException, Malformed {
        MessageFormat f = u.getNextFormat();
        switch (f.getValueType()) {
            case INTEGER -> {
                if (f == MessageFormat.UINT64) {
                    BigInteger big = u.unpackBigInteger();
                    return big.longValue();
                }
                return u.unpackLong();
            }
            case BINARY -> {
                int len = u.unpackBinaryHeader();
                if (len < Long.BYTES) {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                byte[] b = u.readPayload(len);
                long v = 0;
                for (int i = len - Long.BYTES; i < len; i++) {
                    v = (v << 8) | (b[i] & 0xffL);
                }
                return v;
            }
            default -> throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
    }

    private static int blockSize(MessageUnpacker u) throws IOException, Malformed {
        long v = optionalNonNegative(u);
        if (v > Integer.MAX_VALUE) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return v < 0 ? 0 : (int) v;
    }

    /** A non-negative int, or -1 for nil. */
    private static long optionalNonNegative(MessageUnpacker u) throws IOException, Malformed {
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.NIL) {
            u.unpackNil();
            return -1;
        }
        if (f.getValueType() != ValueType.INTEGER || f == MessageFormat.UINT64) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        long v = u.unpackLong();
        if (v < 0) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return v;
    }

    /** Each element takes at least one byte, so a count beyond the payload's size is a lie. */
    private static int boundedCount(int declared, byte[] payload) throws Malformed {
        if (declared < 0 || declared > payload.length) {
            throw new Malformed(KvMalformedReason.TRUNCATED);
        }
        return declared;
    }
}
