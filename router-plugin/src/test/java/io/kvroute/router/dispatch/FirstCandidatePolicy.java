package io.kvroute.router.dispatch;

import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.DecisionReason;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.List;

/** A policy for dispatch tests: picks the first candidate and records every candidate list it was offered. */
final class FirstCandidatePolicy implements RoutingPolicy {

    final List<List<Worker>> seen = new ArrayList<>();

    @Override
    public String name() {
        return "recording";
    }

    @Override
    public Decision select(RoutingRequest request) {
        seen.add(request.candidates());
        return new Decision(request.candidates().get(0), DecisionReason.ROUND_ROBIN, Decision.SOURCE_NONE);
    }
}
