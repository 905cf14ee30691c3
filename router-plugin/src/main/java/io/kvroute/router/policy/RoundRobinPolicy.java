package io.kvroute.router.policy;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Rotates over the candidates. The rotation counter is global, so with a stable candidate list the
 * sequence is exactly w0, w1, ..., w(n-1), w0, ...; when the list changes the rotation continues
 * from the same counter modulo the new size.
 */
final class RoundRobinPolicy implements RoutingPolicy {

    private final AtomicLong next = new AtomicLong();

    @Override
    public String name() {
        return "round_robin";
    }

    @Override
    public Decision select(RoutingRequest request) {
        int size = request.candidates().size();
        int index = (int) Math.floorMod(next.getAndIncrement(), (long) size);
        return new Decision(request.candidates().get(index), DecisionReason.ROUND_ROBIN, Decision.SOURCE_NONE);
    }
}
