package io.kvroute.router.dispatch;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;

/** The span names and tags the dispatch core writes, in one place so every path tags alike. */
final class Traces {

    private Traces() {}

    /** Ends a select span with the decision the dispatch recorded in {@code facts}. */
    static void endSelect(TraceSpan select, RouteFacts facts) {
        select.tag("policy", facts.policy()).tag("decision_reason", facts.reason()).tag("worker", facts.worker());
        if (facts.matchedTokens() >= 0) {
            select.tag("matched_tokens", facts.matchedTokens());
        }
        if (facts.prefillWorker() != null) {
            select.tag("prefill_worker", facts.prefillWorker());
        }
        select.end();
    }

    /** Starts the client span of one upstream call. */
    static TraceSpan upstream(TraceSpan parent, String name, Worker worker, int retry) {
        return parent.clientChild(name).tag("worker", worker.url()).tag("retry", retry);
    }

    /** Ends an upstream span: status 0 means no answer; a failure kind marks it failed. */
    static void endUpstream(TraceSpan span, int status, String failureKind) {
        if (status > 0) {
            span.tag("status", status);
        }
        span.tag("outcome", failureKind == null ? "ok" : failureKind);
        if (failureKind != null) {
            span.error(failureKind);
        }
        span.end();
    }
}
