package io.kvroute.router.metrics;

import io.kvroute.router.tokenize.ChatPrefixCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The router's meters, named once here so dashboards have one place to look. Every name is
 * exported with the {@code kvroute_} prefix by the Prometheus registry (counters gain
 * {@code _total}, timers {@code _seconds}).
 */
public final class RouterMetrics {

    private final PrometheusMeterRegistry registry;
    // per-request meters, memoized by tag values (MeterMemo says why)
    private final MeterMemo<EndpointStatus, Counter> requests;
    private final MeterMemo<MeterMemo.Pair, Timer> durations;
    private final MeterMemo<String, Timer> firstBytes;
    private final MeterMemo<String, Timer> overheads;
    private final MeterMemo<MeterMemo.Pair, Timer> stages;
    private final MeterMemo<MeterMemo.Pair, Timer> tokenizeStages;
    private final Timer upstreamConnect;
    private final Timer upstreamFirstByte;
    private final MeterMemo<MeterMemo.Pair, Counter> decisions;
    private final MeterMemo<MeterMemo.Pair, Counter> pressureSources;
    private final MeterMemo<MeterMemo.Pair, Counter> forwarding;
    private final MeterMemo<String, Timer> tokenizeDurations;
    private final MeterMemo<MeterMemo.Triple, Counter> cacheAwareDecisions;
    private final MeterMemo<String, CacheAwareMeters> cacheAwareMeters;

    private record EndpointStatus(String endpoint, int status) {}

    /** The per-model meters every cache-aware decision updates. */
    private record CacheAwareMeters(Counter gateRejections, Counter admissionRejections, Counter pressureGuardOverrides,
            io.micrometer.core.instrument.DistributionSummary matched,
            io.micrometer.core.instrument.DistributionSummary selectedMatched) {}

    public RouterMetrics() {
        this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    public RouterMetrics(PrometheusMeterRegistry registry) {
        this.registry = registry;
        registry.config().meterFilter(MetricHelp.filter());
        this.requests = new MeterMemo<>(k -> Counter.builder("kvroute.requests").tag("endpoint", k.endpoint())
                .tag("status", Integer.toString(k.status())).register(registry));
        this.durations = new MeterMemo<>(k -> Timer.builder("kvroute.request.duration").tag("endpoint", k.first())
                .tag("outcome", k.second()).publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(30)).register(registry));
        this.firstBytes = new MeterMemo<>(endpoint -> Timer.builder("kvroute.time.to.first.byte").tag("endpoint", endpoint)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(10)).register(registry));
        this.overheads = new MeterMemo<>(endpoint -> Timer.builder("kvroute.router.overhead").tag("endpoint", endpoint)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(10)).register(registry));
        this.stages = new MeterMemo<>(k -> stageTimer("kvroute.router.overhead." + k.first()).tag("endpoint", k.second())
                .register(registry));
        this.tokenizeStages = new MeterMemo<>(k -> stageTimer("kvroute.router.overhead.tokenize").tag("endpoint", k.first())
                .tag("cache", k.second()).register(registry));
        this.upstreamConnect = stageTimer("kvroute.router.overhead.upstream.connect").register(registry);
        this.upstreamFirstByte = stageTimer("kvroute.router.overhead.upstream.first.byte").register(registry);
        this.decisions = new MeterMemo<>(k -> Counter.builder("kvroute.policy.decisions").tag("policy", k.first())
                .tag("reason", k.second()).register(registry));
        this.pressureSources = new MeterMemo<>(k -> Counter.builder("kvroute.pressure.source").tag("policy", k.first())
                .tag("source", k.second()).register(registry));
        this.forwarding = new MeterMemo<>(k -> Counter.builder("kvroute.input.ids.forwarding").tag("model_id", k.first())
                .tag("outcome", k.second()).register(registry));
        this.tokenizeDurations = new MeterMemo<>(modelId -> Timer.builder("kvroute.ingress.tokenize.duration")
                .tag("model_id", modelId).publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(10)).register(registry));
        this.cacheAwareDecisions = new MeterMemo<>(k -> Counter.builder("kvroute.cache.aware.decisions")
                .tag("model_id", k.first()).tag("decision", k.second()).tag("index", k.third()).register(registry));
        this.cacheAwareMeters = new MeterMemo<>(modelId -> new CacheAwareMeters(
                Counter.builder("kvroute.cache.gate.rejections").tag("model_id", modelId).register(registry),
                Counter.builder("kvroute.cache.admission.rejections").tag("model_id", modelId).register(registry),
                Counter.builder("kvroute.cache.pressure.guard.overrides").tag("model_id", modelId).register(registry),
                io.micrometer.core.instrument.DistributionSummary.builder("kvroute.cache.matched.tokens")
                        .tag("model_id", modelId).register(registry),
                io.micrometer.core.instrument.DistributionSummary.builder("kvroute.cache.selected.matched.tokens")
                        .tag("model_id", modelId).register(registry)));
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition. */
    public String scrape() {
        return registry.scrape();
    }

    /** {@code kvroute_requests_total{endpoint,status}}: every answered request, by final status. */
    public void request(String endpoint, int status) {
        requests.get(new EndpointStatus(endpoint, status)).increment();
    }

    /** {@code kvroute_request_duration_seconds{endpoint,outcome}}: ingress to last byte. */
    public void duration(String endpoint, String outcome, long nanos) {
        durations.get(new MeterMemo.Pair(endpoint, outcome)).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** {@code kvroute_time_to_first_byte_seconds{endpoint}}: ingress to the first relayed byte. */
    public void firstByte(String endpoint, long nanos) {
        firstBytes.get(endpoint).record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * {@code kvroute_router_overhead_seconds{endpoint}}: ingress to the first upstream request being
     * sent (body read, parse, tokenize, select), the latency the router adds before a worker sees the
     * request.
     */
    public void overhead(String endpoint, long nanos) {
        overheads.get(endpoint).record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * {@code kvroute_router_overhead_<stage>_seconds{endpoint}}, the per-stage parts of the router's own time, named
     * like Dynamo's {@code router_overhead_*} family: {@code body_read} (ingress to the whole body read),
     * {@code parse} (JSON probe and validation), {@code select} (the policy's decision, PD: both legs). The
     * router's total added time before a worker sees the request is {@link #overhead}.
     */
    public void overheadStage(String stage, String endpoint, long nanos) {
        stages.get(new MeterMemo.Pair(stage, endpoint)).record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * {@code kvroute_router_overhead_tokenize_seconds{endpoint,cache}}: ingress tokenization, by what the chat prefix
     * cache did for it ({@code hit}: every chat segment reused, {@code partial}, {@code miss}, {@code none}: no chat
     * encoding, e.g. raw text or no tokenizer).
     */
    public void overheadTokenize(String endpoint, String cache, long nanos) {
        tokenizeStages.get(new MeterMemo.Pair(endpoint, cache)).record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * {@code kvroute_router_overhead_upstream_connect_seconds}: from handing a request to the HTTP client to it being
     * written on a connection (pool queueing plus any TCP connect); {@code
     * kvroute_router_overhead_upstream_first_byte_seconds}: from then to the worker's first response byte.
     */
    public void overheadUpstream(long connectNanos, long firstByteNanos) {
        upstreamConnect.record(connectNanos, TimeUnit.NANOSECONDS);
        if (firstByteNanos >= 0) {
            upstreamFirstByte.record(firstByteNanos, TimeUnit.NANOSECONDS);
        }
    }

    private static Timer.Builder stageTimer(String name) {
        return Timer.builder(name).publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(1_000))
                .maximumExpectedValue(Duration.ofSeconds(30));
    }

    /** {@code kvroute_policy_decisions_total{policy,reason}}. */
    public void decision(String policy, String reason) {
        decisions.get(new MeterMemo.Pair(policy, reason)).increment();
    }

    /** {@code kvroute_pressure_source_total{policy,source}}: which load signal each decision compared. */
    public void pressureSource(String policy, String source) {
        pressureSources.get(new MeterMemo.Pair(policy, source)).increment();
    }

    /** {@code kvroute_upstream_errors_total{worker,kind}}: connect, timeout, reset, status_5xx. */
    public void upstreamError(String worker, String kind) {
        Counter.builder("kvroute.upstream.errors").tag("worker", worker).tag("kind", kind)
                .register(registry).increment();
    }

    /** {@code kvroute_retries_total{endpoint,cause}}: attempts retried on another worker. */
    public void retry(String endpoint, String cause) {
        Counter.builder("kvroute.retries").tag("endpoint", endpoint).tag("cause", cause == null ? "unknown" : cause)
                .register(registry).increment();
    }

    /** {@code kvroute_retries_exhausted_total{endpoint}}: requests whose last allowed attempt failed too. */
    public void retriesExhausted(String endpoint) {
        Counter.builder("kvroute.retries.exhausted").tag("endpoint", endpoint).register(registry).increment();
    }

    /** {@code kvroute_worker_breaker_transitions_total{worker,from,to}}. */
    public void breakerTransition(String worker, String from, String to) {
        Counter.builder("kvroute.worker.breaker.transitions").tag("worker", worker).tag("from", from).tag("to", to)
                .register(registry).increment();
    }

    /** {@code kvroute_worker_breaker_state{worker}}: 0 closed, 1 open, 2 half-open. */
    public void bindBreakerState(String worker, java.util.function.IntSupplier state) {
        Gauge.builder("kvroute.worker.breaker.state", state, s -> s.getAsInt()).tag("worker", worker)
                .strongReference(true).register(registry);
    }

    /** {@code kvroute_draining}: 1 while the router drains for shutdown. */
    public void bindDraining(java.util.function.BooleanSupplier draining) {
        Gauge.builder("kvroute.draining", draining, d -> d.getAsBoolean() ? 1 : 0).strongReference(true).register(registry);
    }

    /** {@code kvroute_requests_in_flight}: client requests being served. */
    public void bindActive(java.util.function.IntSupplier active) {
        Gauge.builder("kvroute.requests.in.flight", active, a -> a.getAsInt()).strongReference(true).register(registry);
    }

    /** Removes every series of a worker (gauges and its counters) when it leaves the fleet. */
    public void forgetWorker(String worker) {
        for (io.micrometer.core.instrument.Meter meter : registry.getMeters()) {
            if (worker.equals(meter.getId().getTag("worker"))) {
                registry.remove(meter);
            }
        }
    }

    /** {@code kvroute_input_ids_forwarding_total{model_id,outcome}}. */
    public void inputIdsForwarding(String modelId, String outcome) {
        forwarding.get(new MeterMemo.Pair(modelId, outcome)).increment();
    }

    /** {@code kvroute_ingress_tokenize_errors_total{model_id}}. */
    public void ingressTokenizeError(String modelId) {
        Counter.builder("kvroute.ingress.tokenize.errors").tag("model_id", modelId).register(registry).increment();
    }

    /**
     * {@code kvroute_tokenizer_cache_segments_total{model_id,result}} and
     * {@code kvroute_tokenizer_cache_tokens_total{model_id,result}} (result = hit | miss: chat segments and
     * their ids served from the chat prefix cache or computed by the tokenizer), and
     * {@code kvroute_tokenizer_cache_bytes{model_id}} against {@code kvroute_tokenizer_cache_max_bytes}.
     */
    public void bindChatPrefixCache(String modelId, ChatPrefixCache cache) {
        FunctionCounter.builder("kvroute.tokenizer.cache.segments", cache, ChatPrefixCache::hitSegments)
                .tag("model_id", modelId).tag("result", "hit").register(registry);
        FunctionCounter.builder("kvroute.tokenizer.cache.segments", cache, ChatPrefixCache::missSegments)
                .tag("model_id", modelId).tag("result", "miss").register(registry);
        FunctionCounter.builder("kvroute.tokenizer.cache.tokens", cache, ChatPrefixCache::hitTokens)
                .tag("model_id", modelId).tag("result", "hit").register(registry);
        FunctionCounter.builder("kvroute.tokenizer.cache.tokens", cache, ChatPrefixCache::missTokens)
                .tag("model_id", modelId).tag("result", "miss").register(registry);
        Gauge.builder("kvroute.tokenizer.cache.bytes", cache, ChatPrefixCache::bytesHeld)
                .tag("model_id", modelId).strongReference(true).register(registry);
        Gauge.builder("kvroute.tokenizer.cache.max.bytes", cache, ChatPrefixCache::maxBytes)
                .tag("model_id", modelId).strongReference(true).register(registry);
    }

    /** {@code kvroute_ingress_tokenize_duration_seconds{model_id}}. */
    public void ingressTokenizeDuration(String modelId, long nanos) {
        tokenizeDurations.get(modelId).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Failure labels a retry may carry whose set is known up front (status failures add {@code status_NNN}). */
    static final List<String> RETRY_CAUSES_AT_ZERO = List.of("connect", "timeout", "reset", "busy");
    /** Failure kinds blamed on a worker whose set is known up front (plus {@code status_5xx} as they happen). */
    static final List<String> WORKER_ERROR_KINDS_AT_ZERO = List.of("connect", "timeout", "reset", "bad_worker_body");
    /** The circuit breaker's legal transitions ({@code worker/CircuitBreaker}). */
    static final List<List<String>> BREAKER_TRANSITIONS = List.of(List.of("closed", "open"), List.of("open", "half_open"),
            List.of("half_open", "closed"), List.of("half_open", "open"));

    /**
     * Registers at zero every per-endpoint series whose labels are known up front, so that a dashboard panel or a
     * {@code rate()} alert reads 0 on a healthy router instead of "no data" until the first event.
     */
    public void registerEndpointSeriesAtZero(Collection<String> endpoints) {
        for (String endpoint : endpoints) {
            for (String cause : RETRY_CAUSES_AT_ZERO) {
                Counter.builder("kvroute.retries").tag("endpoint", endpoint).tag("cause", cause).register(registry);
            }
            Counter.builder("kvroute.retries.exhausted").tag("endpoint", endpoint).register(registry);
            Counter.builder("kvroute.pd.continuations").tag("endpoint", endpoint).register(registry);
            io.micrometer.core.instrument.DistributionSummary.builder("kvroute.pd.segments").tag("endpoint", endpoint)
                    .register(registry);
        }
    }

    /** Registers a new worker's error and breaker-transition series at zero (see {@link #registerEndpointSeriesAtZero}). */
    public void registerWorkerSeriesAtZero(String worker) {
        for (String kind : WORKER_ERROR_KINDS_AT_ZERO) {
            Counter.builder("kvroute.upstream.errors").tag("worker", worker).tag("kind", kind).register(registry);
        }
        for (List<String> t : BREAKER_TRANSITIONS) {
            Counter.builder("kvroute.worker.breaker.transitions").tag("worker", worker).tag("from", t.get(0))
                    .tag("to", t.get(1)).register(registry);
        }
    }

    /** {@code kvroute_pd_continuations_total{endpoint}}: continuation segments dispatched. */
    public void pdContinuation(String endpoint) {
        Counter.builder("kvroute.pd.continuations").tag("endpoint", endpoint).register(registry).increment();
    }

    /** {@code kvroute_pd_segments}: segments per request that needed a continuation (summary). */
    public void pdSegments(String endpoint, int segments) {
        io.micrometer.core.instrument.DistributionSummary.builder("kvroute.pd.segments").tag("endpoint", endpoint)
                .register(registry).record(segments);
    }

    /** Cache-aware ladder outcome counters for one decision. */
    public void cacheAware(String modelId, io.kvroute.router.policy.CacheAwareDetail detail) {
        cacheAwareDecisions.get(new MeterMemo.Triple(modelId, detail.label(), detail.matchIndex())).increment();
        // registered at the first decision even when zero, so a dashboard's rate() has a series to read
        CacheAwareMeters m = cacheAwareMeters.get(modelId);
        m.gateRejections().increment(detail.gateRejections());
        m.admissionRejections().increment(detail.admissionRejections());
        m.pressureGuardOverrides().increment(detail.pressureGuardOverrides());
        m.matched().record(detail.bestMatchedTokens());
        m.selectedMatched().record(detail.selectedMatchedTokens());
    }

    /**
     * Prefix-tree gauges, read at scrape time: {@code kvroute_prefix_tree_nodes},
     * {@code kvroute_prefix_tree_elements}, {@code kvroute_prefix_evicted_elements},
     * {@code kvroute_prefix_evicted_nodes} (cumulative, exported as gauges of the tree's own counters),
     * tagged {@code policy} and {@code key_mode} (one tree per key kind: tokens, chars, sampled).
     */
    public void bindPrefixIndex(String policy, String keyMode, io.kvroute.router.prefix.PrefixIndex index) {
        Gauge.builder("kvroute.prefix.tree.nodes", index, i -> i.stats().nodes()).tag("policy", policy)
                .tag("key_mode", keyMode).strongReference(true).register(registry);
        Gauge.builder("kvroute.prefix.tree.elements", index, i -> i.stats().elements()).tag("policy", policy)
                .tag("key_mode", keyMode).strongReference(true).register(registry);
        Gauge.builder("kvroute.prefix.evicted.elements", index, i -> i.stats().evictedElements()).tag("policy", policy)
                .tag("key_mode", keyMode).strongReference(true).register(registry);
        Gauge.builder("kvroute.prefix.evicted.nodes", index, i -> i.stats().evictedNodes()).tag("policy", policy)
                .tag("key_mode", keyMode).strongReference(true).register(registry);
        Gauge.builder("kvroute.prefix.tree.bytes", index, i -> i.stats().estimatedBytes()).tag("policy", policy)
                .tag("key_mode", keyMode).baseUnit("bytes").strongReference(true).register(registry);
    }

    /**
     * {@code kvroute_prefix_worker_owned_elements{policy,key_mode,worker}}: key elements a worker owns
     * in the tree of that key kind.
     */
    public void bindPrefixOwned(String policy, String keyMode, String workerUrl, String workerId,
            io.kvroute.router.prefix.PrefixIndex index) {
        Gauge.builder("kvroute.prefix.worker.owned.elements", index, i -> i.stats().ownedElements(workerId))
                .tag("policy", policy).tag("key_mode", keyMode).tag("worker", workerUrl).strongReference(true)
                .register(registry);
    }

    /** {@code kvroute_worker_in_flight{worker}}: router-local in-flight requests. */
    public void bindInFlight(String worker, AtomicInteger counter) {
        Gauge.builder("kvroute.worker.in.flight", counter, AtomicInteger::get).tag("worker", worker)
                .strongReference(true).register(registry);
    }

    /** {@code kvroute_worker_healthy{worker}}: 1 healthy, 0 not. */
    public void bindHealthy(String worker, java.util.function.BooleanSupplier healthy) {
        Gauge.builder("kvroute.worker.healthy", healthy, h -> h.getAsBoolean() ? 1 : 0).tag("worker", worker)
                .strongReference(true).register(registry);
    }

    /**
     * {@code kvroute_tokenizer_cache_declined{model_id,reason}} = 1 for a model that runs without the chat
     * prefix cache although one was asked for ({@code no_splitting_marker}, {@code marker_not_one_id},
     * {@code text_only}).
     */
    public void chatCacheDeclined(String modelId, String reason) {
        Gauge.builder("kvroute.tokenizer.cache.declined", () -> 1).tag("model_id", modelId).tag("reason", reason)
                .register(registry);
    }

    /**
     * {@code kvroute_tokenizer_template_text_only{model_id,reason}} = 1 for a model whose chat template does not
     * compile (reason: {@code unsupported_filter}, {@code no_template}, ...); its chats are counted per request as
     * {@code outcome="text_only"} on the forwarding counter.
     */
    public void templateTextOnly(String modelId, String reason) {
        Gauge.builder("kvroute.tokenizer.template.text.only", () -> 1).tag("model_id", modelId).tag("reason", reason)
                .register(registry);
    }
}
