package io.kvroute.scheduler.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Encodes a {@link LoadStat} into the three frames of a load report:
 * {@code [b"load", seq as 8-byte big-endian u64, msgpack ["LoadStat", ...]]}.
 *
 * <p>Integers use msgpack's smallest encoding, the tag is a str (fixstr {@code a8 "LoadStat"}), as
 * Python's msgpack/msgspec produce them, so the bytes match what an SGLang engine sends. Stateless
 * and thread-safe. Spec: {@code docs/load-report-protocol.md}.
 */
final class LoadStatEncoder {
    /** The first frame, a topic the SUB side subscribes to. */
    static final byte[] TOPIC = "load".getBytes(StandardCharsets.US_ASCII);
    static final String TAG = "LoadStat";

    private LoadStatEncoder() {}

    static byte[] payload(LoadStat stat) {
        LoadStat.Extension ext = stat.ext();
        try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
            packer.packArrayHeader(ext == null ? 6 : 11);
            packer.packString(TAG);
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

    static byte[] seqFrame(long seq) {
        return ByteBuffer.allocate(Long.BYTES).putLong(seq).array();
    }
}
