package io.kvroute.protocol;

/**
 * Why a KV-event message was dropped; the label is the {@code reason} tag of the router's malformed
 * counter. {@link KvEventWire}'s decoder gives the first six; the rest are the router's own checks of a
 * decoded batch against what the engine advertised.
 */
public enum KvMalformedReason {
    /** Not {@code [topic, seq, payload]}, or a seq frame that is not 8 bytes. */
    BAD_FRAMES("bad_frames"),
    /** The batch is not {@code [ts, [events...], rank?]}. */
    BAD_BATCH("bad_batch"),
    /** An event with a tag this router does not know. */
    UNKNOWN_EVENT("unknown_event"),
    /** A field of the wrong type (a hash that is neither int nor bytes, a negative block size, ...). */
    BAD_FIELD("bad_field"),
    TRUNCATED("truncated"),
    GARBAGE("garbage"),
    /** A BlockStored whose block size differs from the size the engine advertised. */
    BLOCK_SIZE_MISMATCH("block_size_mismatch"),
    /** {@code --kv-events-hash tokens}: a BlockStored without {@code token_ids}. */
    MISSING_TOKEN_IDS("missing_token_ids"),
    /** {@code --kv-events-hash tokens}: {@code token_ids} not exactly blocks × block size long. */
    TOKEN_IDS_LENGTH("token_ids_length"),
    /** {@code --kv-events-hash tokens}: a BlockStored whose parent block this router does not know. */
    UNKNOWN_PARENT("unknown_parent");

    private final String label;

    KvMalformedReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
