package io.kvroute.scheduler.queue;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Test builders for scheduling states. */
final class Reqs {

    /** Arrival sequence: builders called in order arrive in order. */
    private static final AtomicLong SEQ = new AtomicLong();

    private Reqs() {}

    static SchedRequest prefill(String id, int inputLen) {
        return prefill(id, inputLen, 0, 0);
    }

    static SchedRequest prefill(String id, int inputLen, int cachedLen, long arrivalProcessed) {
        SchedRequest r = SchedRequest.create(id, SEQ.incrementAndGet(), inputLen, 16, false, 0, arrivalProcessed);
        r.admitWithCachedLen(cachedLen);
        return r;
    }

    static SchedRequest continuation(String id, int inputLen) {
        SchedRequest r = SchedRequest.create(id, SEQ.incrementAndGet(), inputLen, 16, false, 1, 0);
        r.admitWithCachedLen(0);
        return r;
    }

    static SchedRequest decode(String id, int inputLen) {
        SchedRequest r = prefill(id, inputLen);
        r.advancePrefill(inputLen);
        r.addOutputToken();
        return r;
    }

    static List<String> ids(List<SchedRequest> rs) {
        return rs.stream().map(SchedRequest::requestId).toList();
    }
}
