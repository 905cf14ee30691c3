package io.kvroute.router.dispatch;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One client request through up to {@code --retry-max-attempts} attempts, each on a worker chosen
 * by the policy among those not tried yet (the same worker again only when no other is left). What
 * happens after an attempt is the {@link RetryRule}'s decision; this class executes it: schedule
 * the next attempt on the {@link DispatchClock}, relay, or end with an error through the
 * {@link Exchange} (whose terminal transition is once-only).
 *
 * <p>Threading: attempts are sequential; the next one starts from the previous one's completion
 * (or a clock timer). {@link #abort} and the client-gone signal may come from any thread.
 */
public final class Dispatch implements Abortable {

    private final DispatchDeps deps;
    private final PlainRouting routing;
    private final Route route;
    private final Exchange client;
    private final Set<String> tried = new HashSet<>();
    private final RouteFacts facts;
    /** The request's per-worker capacity under QoS, or null: routed over the whole pool. */
    private final WorkerRoom room;

    private volatile Relay current;
    private volatile String abortReason;
    private int attempt; // touched only by the sequential attempt chain
    /** The next send to the same worker leaves the engine priority out (its first ask got a 400); attempt chain only. */
    private boolean askingWithoutPriority;

    public Dispatch(DispatchDeps deps, PlainRouting routing, Route route, ClientSink sink, long startNanos) {
        this(deps, routing, route, sink, startNanos, null);
    }

    /** @param room where the router-side queue lets the request go ({@link WorkerRoom}), or null: anywhere in its pool */
    public Dispatch(DispatchDeps deps, PlainRouting routing, Route route, ClientSink sink, long startNanos,
            WorkerRoom room) {
        this.room = room;
        this.deps = deps;
        this.routing = routing;
        this.route = route;
        this.facts = sink.facts();
        this.client = new Exchange(sink, route.api().path, route.streaming(), startNanos, deps.clock(),
                deps.outcomes(),
                () -> deps.active().remove(this));
    }

    public void start() {
        deps.active().add(this);
        client.onGone(() -> {
            Relay relay = current;
            if (relay != null) {
                relay.abort(null, new IOException("client went away"));
            }
        });
        nextAttempt();
    }

    /** Aborts the request with a clear error (router shutting down). */
    @Override
    public void abort(String reason) {
        abortReason = reason;
        Relay relay = current;
        if (relay != null) {
            relay.abort(reason, new IOException(reason));
        } else {
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), reason);
        }
    }

    private void nextAttempt() {
        attempt++;
        if (abortReason != null) {
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), abortReason);
            return;
        }
        if (client.gone()) {
            client.clientGone(null);
            return;
        }
        Decision decision = choose();
        if (decision == null) {
            String message = attempt == 1 ? "no usable worker for this request"
                    : "no usable worker left after " + (attempt - 1) + " attempt(s)";
            client.fail(503, Failure.of(FailureKind.NO_WORKER), message);
            return;
        }
        Worker worker = decision.worker();
        tried.add(worker.id());
        // counted in flight from the decision on, so requests waiting for an adapter load count as its load
        deps.inFlight().acquire(worker.id());
        java.util.concurrent.CompletableFuture<Void> adapterReady = deps.lora() == null ? null
                : deps.lora().prepare(worker, route.hints().adapter());
        if (adapterReady == null) {
            send(decision);
            return;
        }
        // the adapter is being loaded onto the worker first (dynamic loading); the request waits for that load only
        adapterReady.whenComplete((ok, failure) -> {
            if (failure == null) {
                send(decision);
                return;
            }
            deps.inFlight().release(worker.id());
            Throwable cause = LoraRouting.unwrap(failure);
            boolean timeout = cause instanceof java.util.concurrent.TimeoutException;
            client.fail(timeout ? 504 : 502, Failure.of(FailureKind.ADAPTER_LOAD), "could not load adapter '"
                    + route.hints().adapter() + "' onto worker " + worker.url() + ": "
                    + (timeout ? "no answer within the adapter load timeout" : Failures.describe(cause)));
        });
    }

    /** Sends the attempt to the decision's worker (its adapter, if any, is there; it is counted in flight). */
    private void send(Decision decision) {
        Worker worker = decision.worker();
        if (abortReason != null) {
            deps.inFlight().release(worker.id());
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), abortReason);
            return;
        }
        if (client.gone()) {
            deps.inFlight().release(worker.id());
            client.clientGone(null);
            return;
        }
        client.note(attempt, 0, worker.url(), null);
        deps.loads().dispatchLog().recordDispatch(worker.id(), deps.clock().nanoTime());
        client.resetHead();
        facts.retries(attempt - 1);
        TraceSpan span = Traces.upstream(facts.span(), "kvroute.upstream", worker, attempt - 1);
        byte[] body = route.bodyFor(worker);
        if (body != route.body()) {
            // counted per attempt: a retry on a vLLM worker is another body sent without the router's ids
            deps.metrics().inputIdsForwarding(route.hints().modelLabel(), "engine_unsupported");
        }
        boolean priorityAdded = false;
        if (route.enginePriority() != null && !askingWithoutPriority) {
            byte[] withPriority = route.enginePriority().applyTo(body, worker);
            priorityAdded = withPriority != body;
            body = withPriority;
        }
        // only vLLM refuses the field (400) without priority scheduling; SGLang then ignores it
        boolean refusable = priorityAdded && worker.engine() == EngineType.VLLM;
        boolean withoutPriority = askingWithoutPriority;
        Relay relay = new Relay(client, worker, deps.retry(), attempt,
                OwnershipOnAccept.of(decision, deps.onDispatched()), refusable, result -> {
            Traces.endUpstream(span, result.status(), result.failure() == null ? null : result.failure().label());
            onAttemptDone(decision, refusable, withoutPriority, result);
        });
        current = relay;
        if (attempt == 1) {
            deps.metrics().overhead(route.api().path, deps.clock().nanoTime() - client.startNanos());
        }
        int rank = decision.cacheAware() == null ? -1 : decision.cacheAware().dataParallelRank();
        relay.start(deps.upstream(), deps.requests().plain(worker, route.api().path, body, route.streaming(),
                attempt, span, rank));
        if (client.gone()) {
            relay.abort(null, new IOException("client went away"));
        }
    }

    /**
     * The decision for this attempt, or null when no candidate is left. Under per-worker QoS capacity the policy
     * picks among the candidates with room for the request, and its tokens move to the chosen worker.
     */
    private Decision choose() {
        List<Worker> pool = route.pool().get();
        // First attempt: the pool snapshot itself, the same instance for every request until the fleet
        // changes, so per-request work stays bounded by the policy's candidates (CandidateIndex keys on it).
        List<Worker> candidates = tried.isEmpty() ? pool : untried(pool);
        if (candidates.isEmpty()) {
            return null;
        }
        if (room == null) {
            return select(candidates);
        }
        for (int choice = 1; ; choice++) {
            List<Worker> roomy = WorkerRoom.filter(room.placeable(), candidates, pool);
            // no worker with room (the one holding its tokens left the pool): a retry goes on, over capacity
            boolean force = roomy.isEmpty() || choice == WorkerRoom.MAX_PLACEMENTS;
            Decision decision = select(roomy.isEmpty() ? candidates : roomy);
            if (room.place(decision.worker().id(), force)) {
                return decision;
            }
        }
    }

    private Decision select(List<Worker> candidates) {
        RouteHints hints = route.hints();
        RoutingPolicy policy = routing.forSession(hints.sessionKey());
        TraceSpan select = facts.span().child("kvroute.select");
        long selectStart = deps.clock().nanoTime();
        Decision decision = policy.select(new RoutingRequest(candidates, deps.inFlight()::get, route.inputTokens(),
                hints.sessionKey(), route.tokenIds(), route.loads(), hints.routingText(), hints.adapter(),
                route.engineTokenIds(), hints.extras()));
        deps.metrics().overheadStage("select", route.api().path, deps.clock().nanoTime() - selectStart);
        facts.decision(policy.name(), decision.reason().label(),
                decision.cacheAware() == null ? -1 : decision.cacheAware().selectedMatchedTokens(), decision.worker().url());
        Traces.endSelect(select, facts);
        deps.metrics().decision(policy.name(), decision.reason().label());
        if (decision.cacheAware() != null) {
            deps.metrics().cacheAware(hints.modelLabel(), decision.cacheAware());
        }
        deps.metrics().pressureSource(policy.name(), decision.pressureSource());
        return decision;
    }

    /** Retries: the pool without the workers already tried, or the whole pool when every one was. */
    private List<Worker> untried(List<Worker> pool) {
        List<Worker> untried = new ArrayList<>(pool.size());
        for (Worker worker : pool) {
            if (!tried.contains(worker.id())) {
                untried.add(worker);
            }
        }
        return untried.isEmpty() ? pool : untried;
    }

    private void onAttemptDone(Decision decision, boolean refusable, boolean withoutPriority, Relay.Result result) {
        Worker worker = decision.worker();
        deps.inFlight().release(worker.id());
        askingWithoutPriority = false;
        if (refusable && result.status() == 400 && !result.relayed() && abortReason == null && !client.gone()) {
            // the 400 may be the engine refusing the router's own priority field: ask again without it
            askingWithoutPriority = true;
            deps.inFlight().acquire(worker.id());
            send(decision);
            return;
        }
        if (withoutPriority && result.relayed() && result.status() >= 200 && result.status() < 300) {
            route.enginePriority().refusedBy(worker);
        }
        Failure failure = result.failure();
        if (failure == null) {
            deps.breakers().onSuccess(worker.id());
        } else if (failure.blamesWorker()) {
            deps.breakers().onFailure(worker.id());
            deps.metrics().upstreamError(worker.url(), failure.label());
        }
        Step step = deps.retry().afterPlain(new AttemptFacts(attempt, failure, client.begun(), client.gone(),
                abortReason != null, false, client.startNanos(), deps.clock().nanoTime()));
        switch (step.action()) {
            case RETRY:
                deps.metrics().retry(route.api().path, failure.label());
                deps.clock().schedule(this::nextAttempt, step.delayNanos());
                return;
            case STOP:
                client.clientGone(result.cause());
                return;
            case DONE:
                client.complete(ByteBuffer.allocate(0), null);
                return;
            default:
                giveUp(worker, result);
        }
    }

    private void giveUp(Worker worker, Relay.Result result) {
        Failure failure = result.failure();
        if (abortReason != null && !result.relayed()) {
            client.fail(503, Failure.of(FailureKind.SHUTDOWN), abortReason);
            return;
        }
        if (attempt > 1 && deps.retry().isFinal(attempt)) {
            deps.metrics().retriesExhausted(route.api().path);
        }
        if (result.relayed()) {
            client.complete(ByteBuffer.allocate(0), failure);
            return;
        }
        String message;
        switch (failure.kind()) {
            case SHUTDOWN:
                message = abortReason;
                break;
            case TIMEOUT:
                message = client.begun() ? "worker " + worker.url() + " failed mid-stream: " + Failures.describe(result.cause())
                        : "worker " + worker.url() + " did not answer within the request timeout ("
                                + Failures.describe(result.cause()) + ")";
                break;
            case CONNECT:
                message = "worker " + worker.url() + " is unreachable";
                break;
            default:
                message = client.begun() ? "worker " + worker.url() + " failed mid-stream: " + describe(result)
                        : "worker " + worker.url() + " failed: " + describe(result);
        }
        client.fail(Failures.clientStatus(failure), failure, message);
    }

    private static String describe(Relay.Result result) {
        return result.cause() != null ? Failures.describe(result.cause()) : "answered " + result.status();
    }
}
