package io.kvroute.router.load;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds the {@code GET /v1/loads} payload from one snapshot. Keys per worker: {@code url},
 * {@code fresh}, {@code age_ms} (oldest rank; null until every rank reported), {@code dp_size},
 * {@code ranks_reported}, {@code endpoints}, {@code seq} (last seq per rank, null if none),
 * {@code missed_reports} (seq gaps), {@code pressure_source}, {@code load_source} ({@code loadstat} or
 * {@code metrics}), {@code stale_saturated} (a scraped worker whose reading is stale), and the load fields. The load fields
 * are the fresh, router-adjusted values when {@code fresh}, else the last known engine values summed
 * over the ranks that reported (so an operator sees what went stale).
 */
final class LoadView {
    private LoadView() {}

    static List<Map<String, Object>> of(EngineLoadSnapshot snap) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (WorkerState w : snap.table().workers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            Optional<WorkerLoad> fresh = snap.fresh(w.workerId());
            long oldest = w.oldestReceivedAtNanos();
            List<Object> seqs = new ArrayList<>();
            int reported = 0;
            int running = 0;
            int waiting = 0;
            long tokens = 0;
            for (RankSample s : w.ranks()) {
                seqs.add(s == null ? null : s.report().seq());
                if (s != null) {
                    reported++;
                    running += s.report().numRunningReqs();
                    waiting += s.report().numWaitingReqs();
                    tokens += s.report().numTokens();
                }
            }
            m.put("url", w.workerId());
            m.put("fresh", fresh.isPresent());
            m.put("age_ms", oldest == Long.MIN_VALUE ? null : (snap.nowNanos() - oldest) / 1_000_000L);
            m.put("dp_size", w.dpSize());
            m.put("ranks_reported", reported);
            m.put("endpoints", w.endpoints());
            m.put("seq", seqs);
            m.put("missed_reports", w.missedReports());
            m.put("pressure_source", snap.pressureSource(w.workerId()).label());
            m.put("load_source", w.source().label());
            m.put("stale_saturated", snap.countsAsSaturated(w.workerId()));
            if (fresh.isPresent()) {
                WorkerLoad l = fresh.get();
                m.put("num_waiting_reqs", l.numWaitingReqs());
                m.put("router_dispatches_since_report", l.routerDispatchesSinceCapture());
                m.put("num_running_reqs", l.numRunningReqs());
                m.put("num_tokens", l.numTokens());
                m.put("max_total_num_tokens", l.maxTotalNumTokens());
                m.put("num_total_tokens", l.numTotalTokens());
                m.put("max_running_requests", l.maxRunningRequests());
                m.put("num_waiting_uncached_tokens", l.numWaitingUncachedTokens());
                m.put("estimated_prefill_queue_ms",
                        l.estimatedPrefillQueueMs().isPresent() ? l.estimatedPrefillQueueMs().getAsDouble() : null);
            } else {
                m.put("num_waiting_reqs", reported == 0 ? null : waiting);
                m.put("num_running_reqs", reported == 0 ? null : running);
                m.put("num_tokens", reported == 0 ? null : tokens);
            }
            out.add(m);
        }
        return out;
    }
}
