package io.kvroute.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * The load report's wire format, both directions in one place: the three ZeroMQ frames
 * {@code [b"load", seq as 8-byte big-endian u64, msgpack ["LoadStat", running, waiting, tokens,
 * max_total_tokens, attn_dp_rank, (5 kvroute extension fields)]]} as SGLang's scheduler publishes them
 * (the spec is the repository's {@code docs/load-report-protocol.md}).
 *
 * <p>Encoding (the scheduler plugin's publisher, the mock engine): integers in msgpack's smallest
 * encoding and the tag as a str (fixstr {@code a8 "LoadStat"}), as Python's msgpack/msgspec produce
 * them, so the bytes match what an SGLang engine sends.
 *
 * <p>Decoding (the router's load plane) is as lenient as SGLang's own router: the topic frame's
 * value is not checked (the SUB filter already chose it); the four base counts are required,
 * {@code attn_dp_rank} may be absent or {@code null} (-1 here: the plane keys reports by the socket
 * they came on); further elements are ignored unless all five extension fields are present (a
 * 7-element fork frame decodes as base). Every count is a non-negative msgpack integer in any width.
 * Anything else is a {@link Malformed} with a {@link MalformedReason}; the decoder never throws
 * anything else, so a hostile publisher cannot stop the load-plane thread.
 *
 * <p>Stateless and thread-safe. Golden vectors written by hand (not by this encoder) pin both
 * directions: the scheduler plugin's {@code GoldenLoadVectorsTest} and the router's
 * {@code GoldenVectorsDecodeTest}.
 */
public final class LoadStatWire {

    private LoadStatWire() {}

    /** The first frame, a topic the SUB side subscribes to. */
    public static final byte[] TOPIC = "load".getBytes(StandardCharsets.US_ASCII);

    public static byte[] payload(LoadStat stat) {
        LoadStat.Extension ext = stat.ext();
        try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
            packer.packArrayHeader(ext == null ? 6 : 11);
            packer.packString(TAG_TEXT);
            packer.packInt(stat.numRunningReqs());
            packer.packInt(stat.numWaitingReqs());
            packer.packLong(stat.numTokens());
            packer.packLong(stat.maxTotalNumTokens());
            packer.packInt(stat.attnDpRank());
            if (ext != null) {
                packer.packLong(ext.numWaitingUncachedTokens());
                packer.packLong(ext.numTotalTokens());
                packer.packInt(ext.maxRunningRequests());
                packer.packLong(ext.totalPrefillUncachedTokens());
                packer.packLong(ext.totalPrefillBusyUs());
            }
            return packer.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory msgpack packing failed", e);
        }
    }

    public static byte[] seqFrame(long seq) {
        return ByteBuffer.allocate(Long.BYTES).putLong(seq).array();
    }

    /** The seq that marks "no report" (the replay protocol's end marker); dropped without a gap. */
    public static final long END_SEQ = -1L;
    /** Elements of the base frame without and with the rank: tag + 4 counts (+ rank). */
    private static final int BASE_MIN_ARITY = 5;
    /** Tag + 4 counts + rank + 5 extension fields. */
    private static final int EXTENDED_ARITY = 11;
    private static final String TAG_TEXT = "LoadStat";
    private static final byte[] TAG = TAG_TEXT.getBytes(StandardCharsets.US_ASCII);

    /** A dropped message; no stack trace, it is a value on the hot path. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;
        public final MalformedReason reason;

        Malformed(MalformedReason reason) {
            super(reason.label(), null, false, false);
            this.reason = reason;
        }
    }

    public static LoadReport decode(byte[][] frames, int frameCount) throws Malformed {
        if (frameCount != 3 || frames[1].length != Long.BYTES) {
            throw new Malformed(MalformedReason.BAD_FRAMES);
        }
        return decodePayload(ByteBuffer.wrap(frames[1]).getLong(), frames[2]);
    }

    public static LoadReport decodePayload(long seq, byte[] payload) throws Malformed {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            if (!u.hasNext()) {
                throw new Malformed(MalformedReason.TRUNCATED);
            }
            MessageFormat head = u.getNextFormat();
            if (head.getValueType() != ValueType.ARRAY) {
                throw new Malformed(head == MessageFormat.NEVER_USED ? MalformedReason.GARBAGE : MalformedReason.NOT_ARRAY);
            }
            int n = u.unpackArrayHeader();
            if (n < 1) {
                throw new Malformed(MalformedReason.WRONG_ARITY);
            }
            // Compare raw bytes: unpackString() allocates an 8 KiB char buffer per unpacker, which
            // was half of the load-plane thread's CPU in the LoadPlaneBench profile.
            if (u.getNextFormat().getValueType() != ValueType.STRING
                    || u.unpackRawStringHeader() != TAG.length
                    || !Arrays.equals(u.readPayload(TAG.length), TAG)) {
                throw new Malformed(MalformedReason.UNKNOWN_TAG);
            }
            if (n < BASE_MIN_ARITY) {
                throw new Malformed(MalformedReason.WRONG_ARITY);
            }
            int running = intField(u);
            int waiting = intField(u);
            long tokens = longField(u);
            long maxTotal = longField(u);
            int rank = -1;
            if (n > BASE_MIN_ARITY) {
                if (u.getNextFormat() == MessageFormat.NIL) {
                    u.unpackNil();
                } else {
                    rank = intField(u);
                }
            }
            LoadReport r;
            if (n >= EXTENDED_ARITY) {
                r = new LoadReport(seq, running, waiting, tokens, maxTotal, rank, true,
                        longField(u), longField(u), intField(u), longField(u), longField(u));
            } else {
                r = new LoadReport(seq, running, waiting, tokens, maxTotal, rank, false, 0, 0, 0, 0, 0);
            }
            int consumed = n >= EXTENDED_ARITY ? EXTENDED_ARITY : Math.min(n, BASE_MIN_ARITY + 1);
            for (int extra = n - consumed; extra > 0; extra--) {
                u.skipValue();
            }
            if (u.hasNext()) {
                throw new Malformed(MalformedReason.TRAILING_BYTES);
            }
            return r;
        } catch (MessageInsufficientBufferException e) {
            throw new Malformed(MalformedReason.TRUNCATED);
        } catch (IOException | RuntimeException e) {
            throw new Malformed(MalformedReason.GARBAGE);
        }
    }

    private static long longField(MessageUnpacker u) throws IOException, Malformed {
        if (u.getNextFormat().getValueType() != ValueType.INTEGER) {
            throw new Malformed(MalformedReason.BAD_FIELD);
        }
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.UINT64) {
            BigInteger big = u.unpackBigInteger();
            if (big.bitLength() > 63) {
                throw new Malformed(MalformedReason.BAD_FIELD);
            }
            return big.longValue();
        }
        long v = u.unpackLong();
        if (v < 0) {
            throw new Malformed(MalformedReason.BAD_FIELD);
        }
        return v;
    }

    private static int intField(MessageUnpacker u) throws IOException, Malformed {
        long v = longField(u);
        if (v > Integer.MAX_VALUE) {
            throw new Malformed(MalformedReason.BAD_FIELD);
        }
        return (int) v;
    }
}
