package io.kvroute.bench.trace;

import java.util.Objects;

/**
 * One line of a Mooncake trace: arrival in ms from the trace start, prompt and answer lengths in
 * tokens, and one hash id per 512-token prompt block (equal ids, equal block content and equal
 * everything before it; the last block may be partial).
 */
public record TraceRequest(long timestampMs, int inputLength, int outputLength, long[] hashIds) {

    public TraceRequest {
        Objects.requireNonNull(hashIds, "hashIds");
        if (timestampMs < 0 || inputLength < 1 || outputLength < 0 || hashIds.length == 0) {
            throw new IllegalArgumentException("bad trace line: timestamp " + timestampMs + ", input " + inputLength
                    + ", output " + outputLength + ", " + hashIds.length + " hash ids");
        }
    }

    /** The same request with every hash id moved by {@code offset} (a trace copy that shares nothing). */
    TraceRequest shifted(long offset) {
        long[] ids = new long[hashIds.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = hashIds[i] + offset;
        }
        return new TraceRequest(timestampMs, inputLength, outputLength, ids);
    }
}
