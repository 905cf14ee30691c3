package io.kvroute.protocol;

/** Why a received message was dropped; the label is the {@code reason} tag of the malformed counter. */
public enum MalformedReason {
    /** Not exactly three frames, or a seq frame that is not 8 bytes (the topic's value is not checked). */
    BAD_FRAMES("bad_frames"),
    NOT_ARRAY("not_array"),
    WRONG_ARITY("wrong_arity"),
    UNKNOWN_TAG("unknown_tag"),
    /** A field that is not a non-negative integer that fits its Java type. */
    BAD_FIELD("bad_field"),
    TRUNCATED("truncated"),
    TRAILING_BYTES("trailing_bytes"),
    GARBAGE("garbage"),
    /** {@code attn_dp_rank} is not below the worker's advertised dp size. */
    RANK_OUT_OF_RANGE("rank_out_of_range"),
    /** Applied, but a sum over the worker's ranks overflowed its field and was clamped. */
    SUM_OVERFLOW("sum_overflow");

    private final String label;

    MalformedReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
