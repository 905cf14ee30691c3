package io.kvroute.mock.pd;

/**
 * How a mock worker behaves in prefill/decode disaggregation.
 *
 * @param role regular, prefill or decode
 * @param kvTransferMsPer1k simulated KV transfer milliseconds per 1,000 prompt tokens (prefill side)
 * @param kvTransferTimeoutMillis how long a decode worker waits for its KV before failing clearly
 * @param decodeSegmentTokens a decode worker ends a segment with the capacity marker after this many
 *     tokens (0 = no per-segment limit); simulates running out of KV mid-generation
 */
public record PdOptions(String role, double kvTransferMsPer1k, long kvTransferTimeoutMillis, int decodeSegmentTokens) {

    public static PdOptions regular() {
        return new PdOptions("regular", 0, 30_000, 0);
    }

    public boolean prefill() {
        return role.equals("prefill");
    }

    public boolean decode() {
        return role.equals("decode");
    }
}
