package io.kvroute.scheduler.queue;

import java.util.ArrayList;
import java.util.List;

/** Splits a ready list into decode requests and prefill requests, both in original order. */
final class ReadySplit {

    final List<SchedRequest> decode;
    final List<SchedRequest> prefill;

    ReadySplit(List<SchedRequest> ready) {
        decode = new ArrayList<>();
        prefill = new ArrayList<>(ready.size());
        for (SchedRequest r : ready) {
            (r.isDecode() ? decode : prefill).add(r);
        }
    }

    /** Decode requests, then {@code orderedPrefill}. */
    List<SchedRequest> join(List<SchedRequest> orderedPrefill) {
        List<SchedRequest> out = new ArrayList<>(decode.size() + orderedPrefill.size());
        out.addAll(decode);
        out.addAll(orderedPrefill);
        return out;
    }
}
