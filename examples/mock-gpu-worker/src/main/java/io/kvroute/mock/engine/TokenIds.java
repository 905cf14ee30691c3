package io.kvroute.mock.engine;

/** Deterministic output token ids: the i-th token of a request depends only on its id and i. */
public final class TokenIds {

    private TokenIds() {}

    /** A token id in [1000, 31000) for output position {@code index} of {@code requestId}. */
    public static int output(String requestId, int index) {
        int seed = requestId.hashCode() & 0x7fffffff;
        return 1000 + (int) ((seed + 7919L * index) % 30000);
    }
}
