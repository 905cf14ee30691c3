package io.kvroute.router.http;

import io.kvroute.router.accesslog.RouteFacts;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One client request through up to {@code retryMaxAttempts} attempts, each on a worker chosen by
 * the policy among those not tried yet (the same worker again only when no other is left).
 *
 * <p>Retry rules: a connect failure, a reset or timeout before the first byte, or a worker answer
 * of 429 (busy), 502, 503 or 504 is retried after an exponential backoff with jitter. Nothing is
 * retried once a byte reached the client, nor after a client 4xx, nor once the client went away.
 * The last attempt relays whatever the worker answers, so a final busy 429 reaches the client
 * verbatim with its {@code Retry-After}.
 *
 * <p>Threading: attempts are sequential; the next one starts from the previous one's completion
 * callback (or a scheduler timer). {@link #abort} may come from any thread.
 */
final class Dispatch implements Abortable {

    private final RouterContext ctx;
    private final Endpoint endpoint;
    private final byte[] body;
    private final boolean streaming;
    private final long inputTokens;
    private final int[] tokenIds;
    private final io.kvroute.router.load.EngineLoadSnapshot loads;
    private final RouteHints hints;
    private final Supplier<List<Worker>> eligible;
    private final Request clientRequest;
    private final Response clientResponse;
    private final Callback clientCallback;
    private final long startNanos;
    private final Set<String> tried = new HashSet<>();
    private final RouteFacts facts;

    private volatile ProxyExchange current;
    private volatile boolean clientGone;
    private volatile String abortReason;
    private int attempt;

    Dispatch(RouterContext ctx, Endpoint endpoint, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
            io.kvroute.router.load.EngineLoadSnapshot loads, RouteHints hints,
            Supplier<List<Worker>> eligible, Request clientRequest, Response clientResponse, Callback clientCallback,
            long startNanos) {
        this.ctx = ctx;
        this.endpoint = endpoint;
        this.body = body;
        this.streaming = streaming;
        this.inputTokens = inputTokens;
        this.tokenIds = tokenIds;
        this.loads = loads;
        this.hints = hints;
        this.eligible = eligible;
        this.clientRequest = clientRequest;
        this.clientResponse = clientResponse;
        this.clientCallback = clientCallback;
        this.startNanos = startNanos;
        this.facts = RouteFacts.of(clientRequest);
    }

    void start() {
        ctx.active().add(this);
        clientRequest.addFailureListener(failure -> {
            clientGone = true;
            ProxyExchange exchange = current;
            if (exchange != null) {
                exchange.markClientGone();
                exchange.abort(null, failure);
            }
        });
        nextAttempt();
    }

    /** Aborts the request with a clear error (router shutting down). */
    @Override
    public void abort(String reason) {
        abortReason = reason;
        ProxyExchange exchange = current;
        if (exchange != null) {
            exchange.abort(reason, new java.io.IOException(reason));
        }
    }

    private void nextAttempt() {
        attempt++;
        if (abortReason != null) {
            finish(503, "shutdown");
            OpenAiErrors.send(clientResponse, clientCallback, 503, "service_unavailable", abortReason);
            return;
        }
        if (clientGone) {
            clientCallback.failed(new java.io.IOException("client went away"));
            finish(0, "client_gone");
            return;
        }
        List<Worker> pool = eligible.get();
        List<Worker> untried = new ArrayList<>(pool.size());
        for (Worker worker : pool) {
            if (!tried.contains(worker.id())) {
                untried.add(worker);
            }
        }
        List<Worker> candidates = untried.isEmpty() ? pool : untried;
        if (candidates.isEmpty()) {
            String message = attempt == 1 ? "no usable worker for this request"
                    : "no usable worker left after " + (attempt - 1) + " attempt(s)";
            OpenAiErrors.send(clientResponse, clientCallback, 503, "service_unavailable", message);
            finish(503, attempt == 1 ? "no_worker" : "retries_exhausted");
            return;
        }
        RoutingPolicy policy = hints.sessionKey() != null ? ctx.sessionPolicy() : ctx.policy();
        TraceSpan selectSpan = facts.span().child("kvroute.select");
        Decision decision = policy.select(new RoutingRequest(candidates, ctx.inFlight()::get, inputTokens,
                hints.sessionKey(), tokenIds, loads, hints.routingText()));
        ctx.metrics().decision(policy.name(), decision.reason().label());
        if (decision.cacheAware() != null) {
            ctx.metrics().cacheAware(hints.modelLabel(), decision.cacheAware());
            ctx.onDispatched(decision);
        }
        ctx.metrics().pressureSource(policy.name(), decision.pressureSource());
        Worker worker = decision.worker();
        facts.decision(policy.name(), decision.reason().label(),
                decision.cacheAware() == null ? -1 : decision.cacheAware().selectedMatchedTokens(), worker.url());
        facts.retries(attempt - 1);
        Traces.endSelect(selectSpan, facts);
        TraceSpan attemptSpan = Traces.upstream(facts.span(), "kvroute.upstream", worker, attempt - 1);
        tried.add(worker.id());
        boolean finalAttempt = attempt >= ctx.config().retryMaxAttempts();
        ctx.inFlight().acquire(worker.id());
        ctx.loads().dispatchLog().recordDispatch(worker.id(), System.nanoTime());
        long timeoutMillis = (long) (ctx.config().requestTimeoutSecs() * 1000);
        long idleMillis = (long) (ctx.config().streamIdleTimeoutSecs() * 1000);
        ProxyExchange exchange = new ProxyExchange(ctx.client(), worker, endpoint.path, body, streaming, timeoutMillis,
                idleMillis, finalAttempt, startNanos, clientRequest, clientResponse, clientCallback,
                outcome -> {
                    Traces.endUpstream(attemptSpan, outcome.status(), outcome.failureKind());
                    onAttemptDone(worker, outcome);
                });
        exchange.traced(attemptSpan);
        current = exchange;
        if (clientGone) {
            exchange.markClientGone();
        }
        if (attempt == 1) {
            ctx.metrics().overhead(endpoint.path, System.nanoTime() - startNanos);
        }
        exchange.start();
    }

    private void onAttemptDone(Worker worker, ProxyExchange.Attempt outcome) {
        ctx.inFlight().release(worker.id());
        String kind = outcome.failureKind();
        if (kind != null && !kind.equals("client_gone") && !kind.equals("busy") && !kind.equals("shutdown")) {
            ctx.breakers().onFailure(worker.id());
            ctx.metrics().upstreamError(worker.url(), kind);
        } else if (kind == null) {
            ctx.breakers().onSuccess(worker.id());
        }
        if (outcome.kind() == ProxyExchange.Kind.RETRYABLE) {
            ctx.metrics().retry(endpoint.path, kind);
            long delayNanos = backoffNanos(attempt);
            ctx.client().getScheduler().schedule(this::nextAttempt, delayNanos, TimeUnit.NANOSECONDS);
            return;
        }
        if (outcome.kind() == ProxyExchange.Kind.RELAYED && kind != null && attempt > 1
                && attempt >= ctx.config().retryMaxAttempts()) {
            ctx.metrics().retriesExhausted(endpoint.path);
        }
        if (outcome.firstByteNanos() > 0) {
            ctx.metrics().firstByte(endpoint.path, outcome.firstByteNanos());
        }
        finish(outcome.status(), kind);
    }

    private void finish(int status, String failureKind) {
        ctx.active().remove(this);
        ctx.metrics().request(endpoint.path, status);
        ctx.metrics().duration(endpoint.path, failureKind == null ? "ok" : failureKind, System.nanoTime() - startNanos);
    }

    /** Backoff before attempt {@code failedAttempt + 1}: initial x multiplier^(n-1), capped, with jitter. */
    private long backoffNanos(int failedAttempt) {
        double millis = ctx.config().retryInitialBackoffMs() * Math.pow(ctx.config().retryBackoffMultiplier(), failedAttempt - 1);
        millis = Math.min(millis, ctx.config().retryMaxBackoffMs());
        double jitter = ctx.config().retryJitter();
        millis *= 1 + jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
        return (long) (Math.max(0, millis) * 1_000_000);
    }
}
