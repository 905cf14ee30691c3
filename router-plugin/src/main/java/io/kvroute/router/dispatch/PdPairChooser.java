package io.kvroute.router.dispatch;

import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.function.Supplier;

/**
 * Chooses a prefill/decode pair: the prefill worker from the prefill policy (its session-sticky
 * variant when the request carries a session key), the decode worker from the decode policy. Stateless apart from the pools it reads.
 */
final class PdPairChooser {

    /**
     * A chosen pair, with the prefill decision (policy, reason label, matched tokens or -1) for the access log and
     * trace, and the prefill decision itself, whose prompt ownership is recorded once the prefill worker accepts.
     */
    record Pair(Worker prefill, Worker decode, String policy, String reason, long matchedTokens, Decision prefillDecision) {}

    private final DispatchDeps deps;
    private final PdRouting routing;
    private final Supplier<List<Worker>> prefillPool;
    private final Supplier<List<Worker>> decodePool;
    /** The request's per-worker capacity on the decode side, or null. */
    private final WorkerRoom decodeRoom;

    PdPairChooser(DispatchDeps deps, PdRouting routing, Supplier<List<Worker>> prefillPool,
            Supplier<List<Worker>> decodePool, WorkerRoom decodeRoom) {
        this.decodeRoom = decodeRoom;
        this.deps = deps;
        this.routing = routing;
        this.prefillPool = prefillPool;
        this.decodePool = decodePool;
    }

    /** A pair for {@code route}, or null when either pool is empty. */
    Pair choose(Route route) {
        List<Worker> prefills = prefillPool.get();
        List<Worker> decodes = decodePool.get();
        if (prefills.isEmpty() || decodes.isEmpty()) {
            return null;
        }
        RouteHints hints = route.hints();
        RoutingPolicy prefillPolicy = routing.prefillPolicy();
        RoutingPolicy decodePolicy = routing.decodePolicy();
        RoutingPolicy prefillChooser = routing.prefillFor(hints.sessionKey());
        long selectStart = deps.clock().nanoTime();
        Decision p = prefillChooser.select(new RoutingRequest(prefills, deps.inFlight()::get, route.inputTokens(),
                hints.sessionKey(), route.tokenIds(), route.loads(), hints.routingText(), hints.adapter(), null,
                hints.extras()));
        if (p.cacheAware() != null) {
            deps.metrics().cacheAware(hints.modelLabel(), p.cacheAware());
        }
        Decision d = chooseDecode(decodePolicy, decodes, route);
        if (decodeRoom != null) {
            decodeRoom.prefixOn(p.worker().id()); // the prompt's cache is the prefill worker's
        }
        deps.metrics().overheadStage("select", route.api().path, deps.clock().nanoTime() - selectStart);
        deps.metrics().decision(prefillChooser.name(), p.reason().label());
        deps.metrics().decision("decode_" + decodePolicy.name(), d.reason().label());
        deps.metrics().pressureSource(prefillPolicy.name(), p.pressureSource());
        deps.metrics().pressureSource("decode_" + decodePolicy.name(), d.pressureSource());
        return new Pair(p.worker(), d.worker(), prefillChooser.name(), p.reason().label(),
                p.cacheAware() == null ? -1 : p.cacheAware().selectedMatchedTokens(), p);
    }

    /** The decode worker: among those with room for the request when it holds per-worker capacity ({@link WorkerRoom}). */
    private Decision chooseDecode(RoutingPolicy decodePolicy, List<Worker> decodes, Route route) {
        for (int choice = 1; ; choice++) {
            List<Worker> roomy = decodeRoom == null ? decodes : WorkerRoom.filter(decodeRoom.placeable(), decodes, decodes);
            boolean force = roomy.isEmpty() || choice == WorkerRoom.MAX_PLACEMENTS;
            Decision d = decodePolicy.select(new RoutingRequest(roomy.isEmpty() ? decodes : roomy, deps.inFlight()::get,
                    route.inputTokens(), null, null, route.loads(), null, route.hints().adapter()));
            if (decodeRoom == null || decodeRoom.place(d.worker().id(), force)) {
                return d;
            }
        }
    }
}
