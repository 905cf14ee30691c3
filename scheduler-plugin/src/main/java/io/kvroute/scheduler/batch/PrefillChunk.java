package io.kvroute.scheduler.batch;

import io.kvroute.scheduler.queue.SchedRequest;

/** One request's prompt chunk in a step: {@code tokens} prompt tokens starting at its current KV length. */
public record PrefillChunk(SchedRequest request, int tokens) {

    /** True when this chunk completes the request's prompt (the step then emits its first token). */
    public boolean completesPrefill() {
        return tokens == request.remainingPrefillTokens();
    }
}
