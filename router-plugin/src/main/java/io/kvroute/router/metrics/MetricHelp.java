package io.kvroute.router.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import java.util.Map;

/**
 * The HELP text of every router metric family that is not given one where it is built, in one table, applied
 * to each meter as it registers (a {@link MeterFilter}), so that every family of a scrape carries a
 * description (Prometheus' exposition guidance; {@code promtool check metrics} flags a family without one).
 * Keys are Micrometer's dotted names; the Prometheus name is derived from them ({@code kvroute.retries} is
 * {@code kvroute_retries_total}). A family built with its own {@code description(...)} keeps it. A test scrapes
 * a router with every feature on and fails on any family whose HELP is empty.
 */
public final class MetricHelp {

    private static final Map<String, String> HELP = Map.ofEntries(
            Map.entry("kvroute.requests", "Client requests answered, by endpoint and HTTP status"),
            Map.entry("kvroute.request.duration", "Client request duration from arrival to the last byte, by endpoint and outcome"),
            Map.entry("kvroute.time.to.first.byte", "Time from a client request's arrival to the first response byte relayed"),
            Map.entry("kvroute.router.overhead", "The router's own time per request before the worker was asked (first attempt)"),
            Map.entry("kvroute.router.overhead.body_read", "Router time spent reading the request body"),
            Map.entry("kvroute.router.overhead.parse", "Router time spent parsing and validating the request body"),
            Map.entry("kvroute.router.overhead.select", "Router time spent choosing a worker (policy and ladder)"),
            Map.entry("kvroute.router.overhead.tokenize", "Router time spent tokenizing at ingress, by chat prefix cache outcome"),
            Map.entry("kvroute.router.overhead.upstream.connect", "Time to obtain a connection to the chosen worker"),
            Map.entry("kvroute.router.overhead.upstream.first.byte", "Time from sending a request to the worker's first response byte"),
            Map.entry("kvroute.policy.decisions", "Routing decisions by policy and decision reason"),
            Map.entry("kvroute.pressure.source", "Routing decisions by the load signal they compared (engine report, router-local, none)"),
            Map.entry("kvroute.input.ids.forwarding", "Requests by whether tokenized input_ids were forwarded to the worker, and why not"),
            Map.entry("kvroute.ingress.tokenize.duration", "Ingress tokenization time per request, by model"),
            Map.entry("kvroute.ingress.tokenize.errors", "Ingress tokenizations that failed (the request was routed on its text)"),
            Map.entry("kvroute.cache.aware.decisions", "cache_aware decisions by ladder outcome and the index that answered"),
            Map.entry("kvroute.cache.gate.rejections", "Cache owners the queue gate rejected"),
            Map.entry("kvroute.cache.admission.rejections", "Cache owners hard admission rejected"),
            Map.entry("kvroute.cache.pressure.guard.overrides", "Decisions where a materially less pressured owner beat the deepest match"),
            Map.entry("kvroute.cache.matched.tokens", "Best prefix match per cache_aware decision, in tokens"),
            Map.entry("kvroute.cache.selected.matched.tokens", "Prefix match of the chosen worker per cache_aware decision, in tokens"),
            Map.entry("kvroute.upstream.errors", "Failed attempts blamed on a worker, by kind (connect, timeout, reset, status_5xx, bad body)"),
            Map.entry("kvroute.retries", "Attempts retried on another worker, by endpoint and the failure that caused them"),
            Map.entry("kvroute.retries.exhausted", "Requests whose last allowed attempt failed too"),
            Map.entry("kvroute.worker.breaker.transitions", "Circuit breaker state changes per worker"),
            Map.entry("kvroute.worker.breaker.state", "Circuit breaker state per worker: 0 closed, 1 open, 2 half-open"),
            Map.entry("kvroute.worker.in.flight", "Requests this router has in flight on each worker"),
            Map.entry("kvroute.worker.healthy", "1 while the worker passes its health checks"),
            Map.entry("kvroute.draining", "1 while the router drains for shutdown"),
            Map.entry("kvroute.requests.in.flight", "Client requests being served"),
            Map.entry("kvroute.tokenizer.cache.segments", "Chat prefix cache segments reused (hit) or tokenized anew (miss)"),
            Map.entry("kvroute.tokenizer.cache.tokens", "Chat prefix cache token ids reused (hit) or tokenized anew (miss)"),
            Map.entry("kvroute.tokenizer.cache.bytes", "Bytes held by the chat prefix cache"),
            Map.entry("kvroute.tokenizer.cache.max.bytes", "The chat prefix cache's byte bound"),
            Map.entry("kvroute.pd.continuations", "PD continuation segments dispatched"),
            Map.entry("kvroute.pd.segments", "Segments per PD request that needed a continuation"),
            Map.entry("kvroute.prefix.tree.nodes", "Nodes of the approximate prefix tree"),
            Map.entry("kvroute.prefix.tree.elements", "Key elements (tokens or sampled chars) held by the approximate prefix tree"),
            Map.entry("kvroute.prefix.evicted.elements", "Key elements evicted from the approximate prefix tree"),
            Map.entry("kvroute.prefix.evicted.nodes", "Nodes evicted from the approximate prefix tree"),
            Map.entry("kvroute.prefix.tree.bytes", "Estimated bytes held by the approximate prefix tree"),
            Map.entry("kvroute.prefix.worker.owned.elements", "Key elements of the approximate prefix tree each worker owns"),
            Map.entry("kvroute.kv.events.batches", "KV-event batches applied to the exact index"),
            Map.entry("kvroute.kv.events.block.events", "Block events (stored, removed, cleared) applied to the exact index"),
            Map.entry("kvroute.kv.events.loop.errors", "Unexpected exceptions caught by the KV-events thread"),
            Map.entry("kvroute.kv.events.replay.requests", "Replay requests sent to engines after a sequence gap"),
            Map.entry("kvroute.kv.events.replay.timeouts", "Replay requests that got no complete answer in time"),
            Map.entry("kvroute.kv.events.silences", "Times a KV-event publisher fell silent for the silence period"),
            Map.entry("kvroute.kv.events.token.keying.refused", "KV-event batches refused by token keying (no token ids or a block size mismatch)"));

    private MetricHelp() {}

    /** The filter that gives a registering meter its HELP text when it was built without one. */
    public static MeterFilter filter() {
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (id.getDescription() != null && !id.getDescription().isEmpty()) {
                    return id;
                }
                String help = HELP.get(id.getName());
                return help == null ? id
                        : new Meter.Id(id.getName(), Tags.of(id.getTagsAsIterable()), id.getBaseUnit(), help, id.getType());
            }
        };
    }
}
