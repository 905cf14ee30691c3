package io.kvroute.router.kvevents;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Decoder of engine KV-event messages {@code [topic, seq 8-byte BE, msgpack KVEventBatch]}
 * (REFERENCE §8). The batch is {@code [ts, [events...], data_parallel_rank?]}; each event is either a
 * tagged array ({@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id,
 * medium, ...]}, SGLang and older vLLM) or a map with a {@code type} key (newer vLLM,
 * {@code omit_defaults}: absent keys are defaults). Hashes are msgpack ints (any width; a uint64
 * above 2^63 keeps its bits) or bytes (first 8 bytes, big-endian). Trailing optional fields
 * ({@code lora_name}, {@code extra_keys}, {@code group_idx}, ...) are skipped; {@code token_ids} are
 * skipped too unless asked for ({@code withTokens}, for {@link KvHashMode#TOKENS} publishers), since
 * SGLang's hashes are reproducible from the request's own tokens. A token id must be an integer in
 * {@code [0, 2^31)}.
 *
 * <p>Anything else is a {@link Malformed} with a {@link KvMalformedReason}; nothing else is thrown,
 * and no array is sized beyond the payload's byte count. Stateless and thread-safe.
 */
final class KvEventDecoder {
    static final String BLOCK_STORED = "BlockStored";
    static final String BLOCK_REMOVED = "BlockRemoved";
    static final String ALL_BLOCKS_CLEARED = "AllBlocksCleared";

    /** A dropped message; a value on the hot path, so no stack trace. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;
        final KvMalformedReason reason;

        Malformed(KvMalformedReason reason) {
            super(reason.label(), null, false, false);
            this.reason = reason;
        }
    }

    private KvEventDecoder() {}

    /** Decodes {@code frames[0..count)}; the topic's value is not checked (the SUB filter chose it). */
    static EventBatch decode(byte[][] frames, int count) throws Malformed {
        return decode(frames, count, false);
    }

    /** As {@link #decode(byte[][], int)}; {@code withTokens} keeps each BlockStored's {@code token_ids}. */
    static EventBatch decode(byte[][] frames, int count, boolean withTokens) throws Malformed {
        if (count != 3 || frames[1].length != Long.BYTES) {
            throw new Malformed(KvMalformedReason.BAD_FRAMES);
        }
        return decodePayload(ByteBuffer.wrap(frames[1]).getLong(), frames[2], withTokens);
    }

    static EventBatch decodePayload(long seq, byte[] payload) throws Malformed {
        return decodePayload(seq, payload, false);
    }

    /** One payload; {@code withTokens} keeps each BlockStored's {@code token_ids} (null when absent or nil). */
    static EventBatch decodePayload(long seq, byte[] payload, boolean withTokens) throws Malformed {
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
            return new EventBatch(seq, ts, List.copyOf(out), rank);
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

    /** {@code [tag, fields...]}: positions per REFERENCE §8; missing trailing fields take defaults. */
    private static KvEvent arrayEvent(MessageUnpacker u, byte[] payload, boolean withTokens)
            throws IOException, Malformed {
        int n = u.unpackArrayHeader();
        if (n < 1 || u.getNextFormat().getValueType() != ValueType.STRING) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        String tag = u.unpackString();
        int read = 1;
        KvEvent e;
        switch (tag) {
            case BLOCK_STORED -> {
                if (n < 3) {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                long[] hashes = hashList(u, payload);
                Long parent = optionalHash(u);
                read = 3;
                int blockSize = 0;
                long lora = -1;
                int[] tokens = null;
                if (n > 3) {
                    tokens = tokenIds(u, payload, withTokens);
                    read++;
                }
                if (n > 4) {
                    blockSize = blockSize(u);
                    read++;
                }
                if (n > 5) {
                    lora = optionalNonNegative(u);
                    read++;
                }
                e = new KvEvent.BlockStored(hashes, parent != null, parent == null ? 0 : parent, blockSize, lora,
                        tokens);
            }
            case BLOCK_REMOVED -> {
                if (n < 2) {
                    throw new Malformed(KvMalformedReason.BAD_FIELD);
                }
                e = new KvEvent.BlockRemoved(hashList(u, payload));
                read = 2;
            }
            case ALL_BLOCKS_CLEARED -> e = new KvEvent.AllBlocksCleared();
            default -> throw new Malformed(KvMalformedReason.UNKNOWN_EVENT);
        }
        for (int extra = n - read; extra > 0; extra--) {
            u.skipValue(); // medium and later optional fields
        }
        return e;
    }

    /** {@code {"type": tag, field: value, ...}} in any key order; absent fields are defaults. */
    private static KvEvent mapEvent(MessageUnpacker u, byte[] payload, boolean withTokens)
            throws IOException, Malformed {
        int n = u.unpackMapHeader();
        String tag = null;
        long[] hashes = null;
        int[] tokens = null;
        Long parent = null;
        int blockSize = 0;
        long lora = -1;
        for (int i = 0; i < n; i++) {
            if (u.getNextFormat().getValueType() != ValueType.STRING) {
                throw new Malformed(KvMalformedReason.BAD_FIELD);
            }
            switch (u.unpackString()) {
                case "type" -> {
                    if (u.getNextFormat().getValueType() != ValueType.STRING) {
                        throw new Malformed(KvMalformedReason.BAD_FIELD);
                    }
                    tag = u.unpackString();
                }
                case "block_hashes" -> hashes = hashList(u, payload);
                case "parent_block_hash" -> parent = optionalHash(u);
                case "block_size" -> blockSize = blockSize(u);
                case "lora_id" -> lora = optionalNonNegative(u);
                case "token_ids" -> tokens = tokenIds(u, payload, withTokens);
                default -> u.skipValue();
            }
        }
        if (tag == null) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        return switch (tag) {
            case BLOCK_STORED -> new KvEvent.BlockStored(hashes == null ? new long[0] : hashes, parent != null,
                    parent == null ? 0 : parent, blockSize, lora, tokens);
            case BLOCK_REMOVED -> new KvEvent.BlockRemoved(hashes == null ? new long[0] : hashes);
            case ALL_BLOCKS_CLEARED -> new KvEvent.AllBlocksCleared();
            default -> throw new Malformed(KvMalformedReason.UNKNOWN_EVENT);
        };
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
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.NIL) {
            u.unpackNil();
            return null;
        }
        if (f.getValueType() != ValueType.ARRAY) {
            throw new Malformed(KvMalformedReason.BAD_FIELD);
        }
        int n = boundedCount(u.unpackArrayHeader(), payload);
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

    /** An int hash (any width; uint64 keeps its bits) or a bytes hash (first 8 bytes, big-endian). */
    static long hash(MessageUnpacker u) throws IOException, Malformed {
        MessageFormat f = u.getNextFormat();
        switch (f.getValueType()) {
            case INTEGER -> {
                if (f == MessageFormat.UINT64) {
                    BigInteger big = u.unpackBigInteger();
                    return big.longValue();
                }
                return u.unpackLong();
            }
            case BINARY, STRING -> {
                int len = f.getValueType() == ValueType.BINARY ? u.unpackBinaryHeader() : u.unpackRawStringHeader();
                byte[] b = u.readPayload(len);
                long v = 0;
                for (int i = 0; i < Math.min(Long.BYTES, b.length); i++) {
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
