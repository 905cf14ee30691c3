package io.kvroute.router.ingress;

import io.kvroute.router.tokenize.ChatPrefixCache;
import io.kvroute.router.tokenize.ForwardingGuard;
import io.kvroute.router.trace.TraceSpan;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.dispatch.ClientSink;
import io.kvroute.router.dispatch.Dispatch;
import io.kvroute.router.dispatch.DispatchDeps;
import io.kvroute.router.dispatch.EnginePriority;
import io.kvroute.router.dispatch.ErrorBodies;
import io.kvroute.router.dispatch.PdDispatch;
import io.kvroute.router.dispatch.PdRouting;
import io.kvroute.router.dispatch.PlainRouting;
import io.kvroute.router.dispatch.Route;
import io.kvroute.router.dispatch.RouteHints;
import io.kvroute.router.json.JsonFields;
import io.kvroute.router.lora.LoraRouting;
import io.kvroute.router.metrics.RouterMetrics;
import io.kvroute.router.tokenize.TokenizerRegistry;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.ReadyPool;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.RoutingRequest;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport-neutral front door of the inference endpoints, shared by every adapter (the Jetty
 * core handler and the servlet): admission (draining, API key, content type), the body read through
 * the adapter's {@link BodySource}, validation, model resolution, ingress tokenization, then a
 * plain {@link Dispatch} or a {@link PdDispatch} over the adapter's {@link ClientSink}. Every
 * rejection is an OpenAI JSON error with a precise status.
 *
 * <p>One per router, handed exactly what it uses by the composition root ({@code plugin.RouterAssembly}): the
 * config, the dispatch core's collaborators ({@link DispatchDeps}, whose upstream-request hooks and outcome
 * listeners the root exposes) and the plain and PD policies ({@link PlainRouting}, {@link PdRouting}), the
 * in-flight requests, the tokenizers, the ready pool, the fleet and the clock. Thread-safe.
 */
public final class InferenceFrontDoor {

    private static final Logger LOG = LoggerFactory.getLogger(InferenceFrontDoor.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Fields only the router may put in a body it forwards (docs/pd.md, "Trust boundary"). */
    private static final List<String> ROUTER_ONLY_FIELDS = List.of("segment_index", "high_priority_request", "infer_high_priority");

    /** Reads a request body; the adapter implements it on its transport. */
    public interface BodySource {
        void read(long maxBytes, BodySink sink);
    }

    /** The body, or why it could not be read (413 too large, 400 broken). */
    public interface BodySink {
        void onBody(byte[] body);

        void onError(int status, String message);
    }

    private final RouterConfig config;
    private final RouterMetrics metrics;
    /** The router's one clock: {@link io.kvroute.router.dispatch.Exchange} measures from the start read here. */
    private final LongSupplier nanoClock;
    private final BearerAuth inferenceAuth;
    private final IngressTokenization tokenization;
    private final DispatchDeps deps;
    private final PlainRouting plainRouting;
    private final PdRouting pdRouting;
    private final ActiveRequests active;
    private final ReadyPool readyPool;
    private final WorkerRegistry registry;
    /** Tenants, rate limits and the router-side queue ({@code --tenants-file}), or null: today's path. */
    private final TenantFrontDoor tenants;

    /**
     * @param deps what plain and PD dispatch share (upstream, clock, hooks, counters, meters), built once per router
     * @param plain the policies plain dispatch picks with ({@code plain.policy()} also decides whether to tokenize)
     * @param pd the policies PD dispatch picks pairs with, and its bootstrap rooms
     * @param active the requests in flight; while draining, new requests are refused
     * @param tokenizers ingress tokenization's tokenizers ({@code --tokenizer-path})
     * @param readyPool the published pools requests are routed over, also the known models and readiness
     * @param registry the fleet ({@code /readyz} reports its size)
     * @param nanoClock the router's one nanosecond clock
     */
    public InferenceFrontDoor(RouterConfig config, DispatchDeps deps, PlainRouting plain, PdRouting pd,
            ActiveRequests active, TokenizerRegistry tokenizers, ReadyPool readyPool, WorkerRegistry registry,
            LongSupplier nanoClock) {
        this.config = Objects.requireNonNull(config, "config");
        this.deps = Objects.requireNonNull(deps, "deps");
        this.plainRouting = Objects.requireNonNull(plain, "plain");
        this.pdRouting = Objects.requireNonNull(pd, "pd");
        this.active = Objects.requireNonNull(active, "active");
        this.readyPool = Objects.requireNonNull(readyPool, "readyPool");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.metrics = deps.metrics();
        this.inferenceAuth = BearerAuth.of(config.auth().apiKey());
        this.tokenization = new IngressTokenization(tokenizers, config.tokenization().disableInputIdsForwarding(),
                metrics, nanoClock);
        this.tenants = TenantFrontDoor.create(config.tenants(), config.auth().apiKey(), metrics, plain.policy(),
                readyPool, deps.loads(), nanoClock);
    }

    /** Stops the tenant layer's scheduler (the router is stopping). */
    public void close() {
        if (tenants != null) {
            tenants.close();
        }
    }

    /** True when no {@code --api-key} is set or {@code authorization} carries it (for adapters' other paths). */
    public boolean acceptsApiKey(String authorization) {
        if (inferenceAuth != null && inferenceAuth.accepts(authorization)) {
            return true;
        }
        if (tenants != null) {
            try {
                tenants.identify(name -> name.equals("Authorization") ? authorization : null);
                return true;
            } catch (ApiException e) {
                return false;
            }
        }
        return inferenceAuth == null;
    }

    /** True for the inference paths this front door serves. */
    public static boolean serves(String path) {
        return Endpoint.forPath(path) != null;
    }

    /**
     * Serves one inference request (the method was checked to be POST by the adapter).
     *
     * @param path one of the {@link #serves} paths
     * @param headers request header lookup by name (case-insensitive), null when absent
     */
    public void handle(String path, Function<String, String> headers, BodySource body, ClientSink sink) {
        Endpoint endpoint = Endpoint.forPath(path);
        long startNanos = nanoClock.getAsLong();
        if (active.draining()) {
            reject(endpoint, sink, startNanos, new ApiException(503, "service_unavailable",
                    "the router is shutting down; retry on another replica"), null);
            return;
        }
        TenantFrontDoor.Identity identity = null;
        if (tenants != null) {
            try {
                identity = tenants.identify(headers);
            } catch (ApiException e) {
                reject(endpoint, sink, startNanos, e, null);
                return;
            }
            sink.facts().tenant(identity.tenant().name(), identity.priority().label());
        } else if (inferenceAuth != null && !inferenceAuth.accepts(headers.apply("Authorization"))) {
            reject(endpoint, sink, startNanos, new ApiException(401, "authentication_error",
                    "a valid API key is required (Authorization: Bearer ...)"), "Bearer");
            return;
        }
        TenantFrontDoor.Identity who = identity;
        String contentType = headers.apply("Content-Type");
        if (contentType != null && !isJson(contentType)) {
            reject(endpoint, sink, startNanos,
                    new ApiException(415, "unsupported content type '" + contentType + "'; send application/json"), null);
            return;
        }
        body.read(config.server().maxBodyBytes(), new BodySink() {
            @Override
            public void onBody(byte[] bytes) {
                metrics.overheadStage("body_read", endpoint.path, nanoClock.getAsLong() - startNanos);
                try {
                    dispatch(endpoint, bytes, headers, sink, startNanos, who);
                } catch (ApiException e) {
                    reject(endpoint, sink, startNanos, e, null);
                } catch (RuntimeException e) {
                    LOG.warn("unexpected failure routing {}", endpoint.path, e);
                    reject(endpoint, sink, startNanos, new ApiException(500, "server_error",
                            "internal router error: " + e.getClass().getSimpleName()), null);
                }
            }

            @Override
            public void onError(int status, String message) {
                reject(endpoint, sink, startNanos, new ApiException(status, message), null);
            }
        });
    }

    private void dispatch(Endpoint endpoint, byte[] body, Function<String, String> headers, ClientSink sink,
            long startNanos, TenantFrontDoor.Identity identity) throws ApiException {
        long parseStart = nanoClock.getAsLong();
        ObjectNode root = RequestJson.parse(body); // the request's only parse: everything below reads this tree
        BodyProbe probe = BodyProbe.of(root);
        endpoint.validate(probe);
        metrics.overheadStage("parse", endpoint.path, nanoClock.getAsLong() - parseStart);
        if (probe.n > config.server().maxN()) {
            // bounded before anything is sized by it (the PD bootstrap arrays have n entries)
            throw new ApiException(400, "'n' must be between 1 and " + config.server().maxN() + " (got " + probe.n + ")");
        }
        // with tenants the class decides the engine's priority: a client's own priority field is dropped
        boolean dropPriority = identity != null && probe.enginePriorityField;
        if (probe.routerOnlyField || probe.inputIds == JsonToken.VALUE_NULL || dropPriority) {
            body = sanitized(root, dropPriority);
        }
        EnginePriority enginePriority = identity == null ? null : tenants.enginePriority(identity);
        ReadyPool.Snapshot fleetNow = readyPool.current();
        SortedSet<String> models = fleetNow.models();
        // another served name of a model (vLLM --served-model-name a b) routes as the model; the body keeps it
        String requested = fleetNow.canonicalModel(servedModel(probe.model, models));
        sink.facts().model(requested);
        // an adapter named by model (vLLM/OpenAI style) routes over its base model's workers; lora_path keeps model
        LoraRouting.Resolved named = deps.lora().resolve(requested, probe.loraPath, models);
        String model = named.model();
        String adapter = named.adapter();
        if (model != null && !models.isEmpty() && !models.contains(model)) {
            throw new ApiException(404, "model_not_found", "model '" + model + "' is not served here (available: "
                    + String.join(", ", models) + ")");
        }
        Supplier<List<Worker>> eligible = adapter == null ? pool(WorkerRole.REGULAR, model)
                : adapterPool(model, adapter);
        Supplier<List<Worker>> basePrefills = pool(WorkerRole.PREFILL, model);
        Supplier<List<Worker>> baseDecodes = pool(WorkerRole.DECODE, model);
        boolean pd = !basePrefills.get().isEmpty() && !baseDecodes.get().isEmpty();
        // an adapter request's pair comes from the prefill and decode workers that list the adapter (no loading)
        Supplier<List<Worker>> prefills = adapter == null ? basePrefills
                : () -> deps.lora().listing(basePrefills.get(), adapter);
        Supplier<List<Worker>> decodes = adapter == null ? baseDecodes
                : () -> deps.lora().listing(baseDecodes.get(), adapter);
        if (pd && adapter != null && (prefills.get().isEmpty() || decodes.get().isEmpty())) {
            throw new ApiException(503, "service_unavailable", "no usable prefill/decode pair serves adapter '"
                    + adapter + "' of model '" + model + "'");
        }
        String sessionKey = headers.apply(config.session().idHeader());
        // the caller tokenized: input_ids, or a completion prompt of token ids (routed on as they are)
        boolean callerSentIds = probe.inputIds == JsonToken.START_ARRAY
                || (endpoint == Endpoint.COMPLETIONS && IngressTokenization.isTokenPrompt(root));
        String modelLabel = model == null ? "default" : model;
        if (pd) {
            IngressTokenization.Result tokens = tokenize(sink, endpoint, model, body, root,
                    pdRouting.prefillPolicy().needsTokens(), callerSentIds);
            ObjectNode tree = root; // the PD path rewrites the parsed tree, never a re-parse of the bytes
            boolean routerIds = ForwardingGuard.Outcome.FORWARD.label().equals(tokens.forwardingOutcome());
            if (routerIds) {
                // the ids tokenization spliced into the outgoing bytes go into the tree as well
                ArrayNode ids = tree.putArray("input_ids");
                for (int id : tokens.tokens().ids()) {
                    ids.add(id);
                }
            }
            if (enginePriority != null) {
                // PD workers are SGLang engines (bootstrap rooms): both legs get SGLang's sense
                enginePriority.valueFor(EngineType.SGLANG).ifPresent(v -> tree.put("priority", v));
            }
            JsonFields.dropNulls(tree); // null means absent: the PD path rewrites this body, so say so once
            Route route = new Route(endpoint.api, tokens.outgoingBody(), tree.path("stream").asBoolean(false),
                    tokens.inputTokens(), tokens.tokens() == null ? null : tokens.tokens().ids(), deps.loads().snapshot(),
                    new RouteHints(sessionKey, tokens.routingText(), modelLabel, adapter, probe.extras()), decodes,
                    routerIds ? body : null); // non-null: the tree's input_ids are the router's, left out for vLLM legs
            if (identity == null) {
                new PdDispatch(deps, pdRouting, route, tree, prefills, decodes, sink, startNanos).start();
                return;
            }
            // a PD request holds its tokens on its decode worker (the capacity counts regular and decode workers); its
            // prompt's cache is on its prefill worker, where the queue's locality looks once the dispatch names it
            ToLongFunction<String> prefillCachedOn = cachedTokensProbe(pdRouting.prefillPolicy(), prefills.get(), route,
                    sessionKey, adapter);
            tenants.admit(identity, tokens.inputTokens(), probe.tokenBudget, prefillCachedOn, decodes, sink, (qosSink, room) -> {
                PdDispatch d = new PdDispatch(deps, pdRouting, route, tree, prefills, decodes, qosSink, startNanos, room);
                d.start();
                return d;
            }, (s, e) -> reject(endpoint, s, startNanos, e, null));
            return;
        }
        if (eligible.get().isEmpty()) {
            throw new ApiException(503, "service_unavailable", adapter != null && !pool(WorkerRole.REGULAR, model).get().isEmpty()
                    ? "no usable worker serves adapter '" + adapter + "' of model '" + model + "'"
                    : "no usable worker for model '" + (model == null ? "(any)" : model) + "'");
        }
        IngressTokenization.Result tokens = tokenize(sink, endpoint, model, body, root, plainRouting.policy().needsTokens(),
                callerSentIds);
        Route route = new Route(endpoint.api, tokens.outgoingBody(), probe.stream, tokens.inputTokens(),
                tokens.tokens() == null ? null : tokens.tokens().ids(), deps.loads().snapshot(),
                new RouteHints(sessionKey, tokens.routingText(), modelLabel, adapter, probe.extras()), eligible,
                tokens.outgoingBody() == body ? null : body, enginePriority, tokens.engineTokenIds());
        if (identity == null) {
            new Dispatch(deps, plainRouting, route, sink, startNanos).start();
            return;
        }
        ToLongFunction<String> cachedOn = cachedTokensProbe(plainRouting.policy(), eligible.get(), route, sessionKey,
                probe.loraPath);
        tenants.admit(identity, tokens.inputTokens(), probe.tokenBudget, cachedOn, eligible, sink, (qosSink, room) -> {
            Dispatch d = new Dispatch(deps, plainRouting, route, qosSink, startNanos, room);
            d.start();
            return d;
        }, (s, e) -> reject(endpoint, s, startNanos, e, null));
    }

    /** For the router-side queue's locality: the prompt tokens cache-aware {@code policy} sees on each worker, or null. */
    private ToLongFunction<String> cachedTokensProbe(RoutingPolicy policy, List<Worker> workers, Route route,
            String sessionKey, String adapter) {
        return policy instanceof CacheAwarePolicy cacheAware && !workers.isEmpty()
                ? cacheAware.cachedTokensProbe(new RoutingRequest(workers, deps.inFlight()::get, route.inputTokens(),
                        sessionKey, route.tokenIds(), route.loads(), route.hints().routingText(), adapter))
                : null;
    }

    /**
     * The model a request names: a missing model or SGLang's {@code "default"} is the one model the
     * fleet serves when it serves exactly one (SGLang routes them so); otherwise the name as given,
     * so {@code "default"} among several models is an unknown model (404).
     */
    static String servedModel(String requested, SortedSet<String> served) {
        if ((requested == null || requested.equals("default")) && served.size() == 1) {
            return served.first();
        }
        return requested;
    }

    /**
     * Only the router sets the engine-priority and segment fields; a client's are dropped, as are JSON
     * nulls, and with {@code dropPriority} (tenants on) the engine's {@code priority} field.
     */
    private static byte[] sanitized(ObjectNode tree, boolean dropPriority) {
        for (String field : ROUTER_ONLY_FIELDS) {
            tree.remove(field);
        }
        if (dropPriority) {
            tree.remove("priority");
        }
        JsonFields.dropNulls(tree);
        return tree.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Ingress tokenization inside a {@code kvroute.tokenize} span of the request's trace. */
    private IngressTokenization.Result tokenize(ClientSink sink, Endpoint endpoint, String model, byte[] body,
            ObjectNode root, boolean policyNeedsTokens, boolean callerSentIds) throws ApiException {
        TraceSpan span = sink.facts().span().child("kvroute.tokenize");
        long tokenizeStart = nanoClock.getAsLong();
        ChatPrefixCache.takeOutcomeOnThisThread(); // clear whatever an earlier request on this thread left
        try {
            IngressTokenization.Result tokens = tokenization.apply(endpoint, model, body, root, policyNeedsTokens, callerSentIds);
            metrics.overheadTokenize(endpoint.path, ChatPrefixCache.takeOutcomeOnThisThread(),
                    nanoClock.getAsLong() - tokenizeStart);
            span.tag("input_tokens", tokens.inputTokens()).tag("input_ids_forwarding", tokens.forwardingOutcome());
            return tokens;
        } finally {
            span.end();
        }
    }

    /**
     * The usable workers of {@code role} serving {@code model}, from the published {@code ReadyPool} snapshot:
     * O(1) per call when no breaker is open, instead of a scan of the fleet with a breaker lock per worker
     * (a per-request cost that grew with the fleet; the fleet-scale bench scenario measures it).
     */
    private Supplier<List<Worker>> pool(WorkerRole role, String model) {
        return () -> readyPool.current().eligible(role, model);
    }

    /** The base model's usable workers that may serve {@code adapter} ({@link LoraRouting#candidates}). */
    private Supplier<List<Worker>> adapterPool(String model, String adapter) {
        Supplier<List<Worker>> base = pool(WorkerRole.REGULAR, model);
        return () -> deps.lora().candidates(base.get(), adapter);
    }

    /** A small JSON answer: status and body. */
    public record JsonAnswer(int status, String body) {}

    /**
     * {@code /readyz}: ready when a plain pool or a PD pair can serve (the published {@code ReadyPool} snapshot:
     * healthy, not draining, breaker allowing traffic, a prefill worker's bootstrap port known) and the router
     * is not draining. No fleet scan, no breaker lock per worker.
     */
    public JsonAnswer readiness() {
        ReadyPool.Snapshot pool = readyPool.current();
        boolean draining = active.draining();
        boolean ready = pool.canServeSomething() && !draining;
        String body = "{\"ready\":" + ready + ",\"draining\":" + draining + ",\"usable_workers\":" + pool.usableCount()
                + ",\"workers\":" + registry.fleet().workers().size() + "}";
        return new JsonAnswer(ready ? 200 : 503, body);
    }

    /** {@code /v1/models}: the OpenAI model list, with the adapters workers list (cards with {@code parent}). */
    public String modelsJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        ReadyPool.Snapshot fleetNow = readyPool.current();
        // every served name gets a base card, as vLLM lists --served-model-name a b
        TreeSet<String> names = new TreeSet<>(fleetNow.models());
        names.addAll(fleetNow.modelAliases().keySet());
        for (String id : names) {
            ObjectNode model = data.addObject();
            model.put("id", id);
            model.put("object", "model");
            model.put("owned_by", "kvroute");
        }
        // adapters as the engines list them: one card per adapter, parent = its base model
        new java.util.TreeMap<>(deps.lora().directory().current().baseOf()).forEach((adapter, base) -> {
            ObjectNode card = data.addObject();
            card.put("id", adapter);
            card.put("object", "model");
            card.put("owned_by", "kvroute");
            card.put("parent", base);
        });
        return root.toString();
    }

    /** The Prometheus scrape. */
    public String scrape() {
        return metrics.scrape();
    }

    /** Configured model ids plus those the workers report (from the published snapshot, not a fleet scan). */
    SortedSet<String> knownModels() {
        return readyPool.current().models();
    }

    private void reject(Endpoint endpoint, ClientSink sink, long startNanos, ApiException error, String authenticate) {
        Map<String, String> head = new LinkedHashMap<>();
        head.put("Content-Type", "application/json");
        if (authenticate != null) {
            head.put("WWW-Authenticate", authenticate);
        }
        head.putAll(error.headers);
        sink.begin(error.status, head);
        sink.end(ByteBuffer.wrap(ErrorBodies.json(error.status, error.type, error.getMessage(), error.param)));
        metrics.request(endpoint.path, error.status);
        metrics.duration(endpoint.path, "rejected", nanoClock.getAsLong() - startNanos);
    }

    private static boolean isJson(String contentType) {
        String mime = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        return mime.equals("application/json") || mime.endsWith("+json");
    }
}
