package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineRequest;
import io.kvroute.mock.engine.TokenSink;
import io.kvroute.mock.pd.KvBudget;
import io.kvroute.mock.pd.KvRendezvous;
import io.kvroute.mock.pd.PdOptions;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.trace.TraceSpan;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The mock worker's HTTP edge: what a real SGLang worker speaks. Generation endpoints parse the
 * body into an {@link EngineRequest} (text is tokenized here unless {@code input_ids} arrive) and
 * relay the engine's {@link TokenSink} events as SSE or one JSON body. Internal scheduling fields
 * ({@code infer_high_priority}) are rejected: only the engine derives them.
 *
 * <p>Also serves {@code /health}, {@code /server_info}, {@code /v1/models}, {@code /scheduler}
 * (read-only queue view) and {@code /debug/requests} (the last bodies received, for tests).
 */
public final class MockWorkerHandler extends Handler.Abstract {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY_BYTES = 64 << 20;
    private static final int RECENT_BODIES = 64;
    private static final int DEFAULT_MAX_TOKENS = 16;
    /** Largest token budget accepted; output ids are buffered per request, so an int-sized budget would not fit in memory. */
    static final int MAX_TOKENS_LIMIT = 1_000_000;

    private final Engine engine;
    private final PromptEncoder encoder;
    private final String modelId;
    private volatile boolean ignoreChatInputIds;
    private final Supplier<Map<String, Object>> serverInfo;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong aborted = new AtomicLong();
    private final ArrayDeque<JsonNode> recent = new ArrayDeque<>(); // guarded by itself
    private volatile boolean healthy = true;
    private final PdOptions pd;
    private final KvRendezvous rendezvous;
    private final KvBudget kvBudget;
    private final org.eclipse.jetty.client.HttpClient kvClient;
    private final java.util.concurrent.ScheduledExecutorService timers;
    private final double speedup;
    /** Decode role: tokens already generated per client rid, so continuation segments continue the sequence. */
    private final Map<String, Integer> generatedByRid = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(64, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
                    return size() > 10_000;
                }
            });
    /** Output text per client rid (last 256), for tests that check segment reassembly. */
    private final Map<String, String> outputByRid = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(64, 0.75f, false) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > 256;
                }
            });

    public MockWorkerHandler(Engine engine, PromptEncoder encoder, String modelId, Supplier<Map<String, Object>> serverInfo) {
        this(engine, encoder, modelId, serverInfo, PdOptions.regular(), 0, null, 1.0);
    }

    public MockWorkerHandler(Engine engine, PromptEncoder encoder, String modelId, Supplier<Map<String, Object>> serverInfo,
            PdOptions pd, long kvCapacityTokens, org.eclipse.jetty.client.HttpClient kvClient, double speedup) {
        super(InvocationType.NON_BLOCKING);
        this.engine = Objects.requireNonNull(engine, "engine");
        this.encoder = Objects.requireNonNull(encoder, "encoder");
        this.modelId = Objects.requireNonNull(modelId, "modelId");
        this.serverInfo = Objects.requireNonNull(serverInfo, "serverInfo");
        this.pd = Objects.requireNonNull(pd, "pd");
        this.timers = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mock-pd-timers");
            t.setDaemon(true);
            return t;
        });
        this.rendezvous = new KvRendezvous(timers);
        this.kvBudget = new KvBudget(kvCapacityTokens);
        this.kvClient = kvClient;
        this.speedup = speedup;
    }

    private volatile RequestTracer tracer = RequestTracer.off();
    private final java.util.concurrent.atomic.AtomicInteger injectedFailures = new java.util.concurrent.atomic.AtomicInteger();
    private volatile int injectedStatus;

    /**
     * Fault injection for tests and drills: the next {@code count} generation requests are answered
     * at once with {@code status} (429 comes as {@code server_busy} with {@code Retry-After}).
     */
    public void injectFailures(int status, int count) {
        injectedStatus = status;
        injectedFailures.set(count);
    }

    private final java.util.concurrent.atomic.AtomicInteger pendingKvTransfers = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Decode role: requests admitted but still waiting for their KV from the prefill node. Real PD
     * decode engines count their transfer queue as waiting work, so the load report does too.
     */
    public int pendingKvTransfers() {
        return pendingKvTransfers.get();
    }

    private java.util.concurrent.ExecutorService tokenizerManager;
    private volatile TokenizeCost tokenizeCost = TokenizeCost.none();

    /** Simulated engine-side tokenization time, held on the tokenizer thread (see {@link TokenizeCost}). */
    public void useTokenizeCost(TokenizeCost cost) {
        tokenizeCost = Objects.requireNonNull(cost, "cost");
    }

    /**
     * Tokenizes text prompts on {@code threads} dedicated threads instead of the HTTP threads (SGLang's
     * TokenizerManager is one process by default). Null or 0 keeps tokenization inline.
     */
    public void useTokenizerThreads(int threads) {
        if (threads > 0) {
            tokenizerManager = java.util.concurrent.Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "mock-tokenizer-manager");
                t.setDaemon(true);
                return t;
            });
        }
    }

    /** The output text this worker produced for a client {@code rid} (all segments it served). */
    public String outputFor(String rid) {
        return outputByRid.get(rid);
    }

    public KvBudget kvBudget() {
        return kvBudget;
    }

    public KvRendezvous rendezvous() {
        return rendezvous;
    }

    /**
     * Continues each request's incoming trace context and reports engine queue/prefill/decode spans
     * ({@link RequestTracer#off()} by default). Closed by {@link #shutdown}.
     */
    public void useTracer(RequestTracer tracer) {
        this.tracer = Objects.requireNonNull(tracer, "tracer");
    }

    /** Stops the PD timers and the tokenizer threads. */
    public void shutdown() {
        tracer.close();
        timers.shutdownNow();
        if (tokenizerManager != null) {
            tokenizerManager.shutdownNow();
        }
    }

    /** Requests aborted because the client (the router) went away mid-generation. */
    public long abortedRequests() {
        return aborted.get();
    }

    public long requests() {
        return requests.get();
    }

    /**
     * Chat requests drop {@code input_ids} and are tokenized from their messages, as vLLM's chat does
     * ({@code --engine-api vllm}; {@link #recentBodies} still shows what arrived).
     */
    public void ignoreChatInputIds() {
        ignoreChatInputIds = true;
    }

    private volatile io.kvroute.mock.lora.LoraApi lora;

    /** Serves LoRA adapters ({@code --max-loras}): requests naming one go through its slots. */
    public void useLora(io.kvroute.mock.lora.LoraApi loraApi) {
        lora = Objects.requireNonNull(loraApi, "loraApi");
    }

    /** Makes {@code /health} answer 503 (a worker that is up but refuses traffic). */
    public void setHealthy(boolean isHealthy) {
        healthy = isHealthy;
    }

    /** The last bodies received by generation endpoints, oldest first. */
    public List<JsonNode> recentBodies() {
        synchronized (recent) {
            return new ArrayList<>(recent);
        }
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        ApiKind kind = ApiKind.forPath(path);
        if (kind != null) {
            if (!"POST".equals(request.getMethod())) {
                error(response, callback, 405, "method_not_allowed", path + " only accepts POST");
                return true;
            }
            TraceSpan span = !tracer.enabled() ? TraceSpan.NOOP
                    : tracer.ingress("engine.request", name -> request.getHeaders().get(name)).tag("path", path);
            Callback traced = span == TraceSpan.NOOP ? callback
                    : Callback.from(callback, () -> span.tag("status", response.getStatus()).end());
            Content.Source.asByteArrayAsync(request, MAX_BODY_BYTES).whenComplete((body, failure) -> {
                if (failure != null) {
                    error(response, traced, 413, "request_too_large", "body unreadable or over " + MAX_BODY_BYTES + " bytes");
                    return;
                }
                try {
                    generate(kind, body, response, traced, span);
                } catch (BadRequest e) {
                    error(response, traced, 400, "invalid_request_error", e.getMessage());
                } catch (RuntimeException e) {
                    failure(response, traced, e);
                }
            });
            return true;
        }
        if (path.startsWith("/kv/") && "GET".equals(request.getMethod())) {
            serveKv(path.substring(4), response, callback);
            return true;
        }
        if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())) {
            boolean known = switch (path) {
                case "/health", "/server_info", "/get_server_info", "/v1/models", "/scheduler", "/debug/requests" -> true;
                default -> false;
            };
            if (known) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET");
                error(response, callback, 405, "method_not_allowed", path + " only accepts GET");
                return true;
            }
        }
        switch (path) {
            case "/health":
                boolean ok = healthy && engine.isAlive(); // a dead engine loop fails health
                json(response, callback, ok ? 200 : 503, ok ? "{\"status\":\"ok\"}" : "{\"status\":\"unhealthy\"}");
                return true;
            case "/server_info":
            case "/get_server_info":
                json(response, callback, 200, JSON.valueToTree(serverInfo.get()).toString());
                return true;
            case "/v1/models":
                ObjectNode models = JSON.createObjectNode();
                models.put("object", "list");
                models.putArray("data").addObject().put("id", modelId).put("object", "model").put("owned_by", "mock");
                json(response, callback, 200, models.toString());
                return true;
            case "/scheduler":
                json(response, callback, 200, JSON.valueToTree(engine.schedulerView()).toString());
                return true;
            case "/debug/requests":
                ArrayNode bodies = JSON.createArrayNode();
                recentBodies().forEach(bodies::add);
                json(response, callback, 200, bodies.toString());
                return true;
            default:
                error(response, callback, 404, "not_found_error", "no route for " + path);
                return true;
        }
    }

    private static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message, null, false, false);
        }
    }

    private void generate(ApiKind kind, byte[] bytes, Response response, Callback callback, TraceSpan span) {
        JsonNode received;
        try {
            received = JSON.readTree(bytes);
        } catch (java.io.IOException e) {
            throw new BadRequest("invalid JSON body");
        }
        if (received == null || !received.isObject()) {
            throw new BadRequest("the request body must be a JSON object");
        }
        // vLLM's chat drops input_ids; recentBodies still shows what arrived
        JsonNode body = ignoreChatInputIds && kind == ApiKind.CHAT && received.has("input_ids")
                ? ((com.fasterxml.jackson.databind.node.ObjectNode) received.deepCopy()).without("input_ids") : received;
        if (body.has("infer_high_priority")) {
            throw new BadRequest("'infer_high_priority' is internal to the engine and cannot be set by a client");
        }
        synchronized (recent) {
            recent.addLast(received);
            while (recent.size() > RECENT_BODIES) {
                recent.removeFirst();
            }
        }
        requests.incrementAndGet();
        if (injectedFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            int status = injectedStatus;
            if (status == 429) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            }
            error(response, callback, status, status == 429 ? "server_busy" : "injected_failure",
                    "injected failure " + status);
            return;
        }
        int maxTokens = maxTokens(kind, body);
        io.kvroute.mock.lora.LoraApi loraApi = lora;
        String adapter = loraApi == null ? null : loraApi.adapterOf(body);
        if (adapter != null) {
            // a LoRA request waits for its adapter's slot, then runs under the adapter's cache salt (mock.lora)
            loraApi.run(adapter, response, callback, (salt, released) -> {
                try {
                    admit(kind, body, io.kvroute.mock.lora.LoraSlots.salted(inputIds(kind, body), salt), maxTokens,
                            response, released, span);
                } catch (BadRequest e) {
                    error(response, released, 400, "invalid_request_error", e.getMessage());
                } catch (RuntimeException e) {
                    failure(response, released, e);
                }
            });
            return;
        }
        if (body.hasNonNull("input_ids") || tokenizerManager == null) {
            admit(kind, body, inputIds(kind, body), maxTokens, response, callback, span);
            return;
        }
        // Like SGLang's TokenizerManager: text is tokenized by a small pool (one thread by default), so
        // under load requests queue for tokenization; forwarded input_ids skip this queue entirely.
        tokenizerManager.execute(() -> {
            try {
                long startNanos = System.nanoTime();
                int[] ids = inputIds(kind, body);
                TokenizeCost.holdTokenizer(tokenizeCost, ids.length, System.nanoTime() - startNanos, speedup);
                admit(kind, body, ids, maxTokens, response, callback, span);
            } catch (BadRequest e) {
                error(response, callback, 400, "invalid_request_error", e.getMessage());
            } catch (RuntimeException e) {
                failure(response, callback, e);
            }
        });
    }

    /** An unexpected failure: 503 when the engine loop is dead (the worker cannot serve), else 500. */
    private void failure(Response response, Callback callback, RuntimeException e) {
        if (!engine.isAlive()) {
            error(response, callback, 503, "service_unavailable", "engine loop is not running");
        } else {
            error(response, callback, 500, "server_error", "mock worker failure: " + e);
        }
    }

    private void admit(ApiKind kind, JsonNode body, int[] inputIds, int maxTokens, Response response, Callback callback,
            TraceSpan span) {
        if (inputIds.length == 0) {
            throw new BadRequest("the prompt is empty");
        }
        String requestId = body.path("rid").asText(kind.name().toLowerCase() + "-" + UUID.randomUUID());
        int segmentIndex = body.path("segment_index").asInt(0);
        boolean highPriority = body.path("high_priority_request").asBoolean(false);
        boolean stream = body.path("stream").asBoolean(false);
        boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
        String clientRid = body.hasNonNull("rid") && body.get("rid").isTextual() ? body.get("rid").asText() : null;
        List<Long> rooms = rooms(body.get("bootstrap_room"));
        OutputFormatter format = new OutputFormatter(kind, requestId, body.path("model").asText(modelId));
        if (pd.prefill() && !rooms.isEmpty()) {
            // A prefill node computes the KV (and the first token) and hands the KV to the decode node.
            EngineRequest engineRequest = new EngineRequest(requestId, inputIds, 1, true, highPriority, segmentIndex);
            Relay relay = new Relay(format, stream, includeUsage, 1, response, callback, clientRid, 0);
            relay.onPrefilled = () -> rooms.forEach(room -> rendezvous.ready(room, inputIds.length));
            relay.onFailed = reason -> rooms.forEach(room -> rendezvous.failed(room, reason));
            relay.submission = engine.submit(engineRequest, EngineSpans.wrap(relay, span));
            return;
        }
        if (pd.decode()) {
            JsonNode host = body.get("bootstrap_host");
            JsonNode port = body.get("bootstrap_port");
            if (rooms.isEmpty() || host == null || port == null || port.isNull()) {
                throw new BadRequest("a decode worker needs bootstrap_host, bootstrap_port and bootstrap_room");
            }
            String bootstrapHost = host.isArray() ? host.get(0).asText() : host.asText();
            int bootstrapPort = port.isArray() ? port.get(0).asInt() : port.asInt();
            int offset = clientRid == null ? 0 : generatedByRid.getOrDefault(clientRid, 0);
            if (segmentIndex == 0 && clientRid != null) {
                offset = 0;
                generatedByRid.remove(clientRid);
                outputByRid.remove(clientRid);
            }
            int startOffset = offset;
            pendingKvTransfers.incrementAndGet();
            fetchKv(bootstrapHost, bootstrapPort, rooms, (tokens, failure) -> {
                pendingKvTransfers.decrementAndGet();
                if (failure != null) {
                    int status = failure instanceof java.util.concurrent.TimeoutException ? 504 : 502;
                    error(response, callback, status, "kv_transfer_failed", "KV transfer from prefill " + bootstrapHost + ":"
                            + bootstrapPort + " failed: " + failure.getMessage());
                    return;
                }
                if (!kvBudget.tryReserve(inputIds.length)) {
                    error(response, callback, 429, "server_busy", "decode KV capacity exhausted; retry later");
                    return;
                }
                EngineRequest engineRequest = new EngineRequest(requestId, inputIds, maxTokens, true, highPriority, segmentIndex);
                Relay relay = new Relay(format, stream, includeUsage, maxTokens, response, callback, clientRid, startOffset);
                relay.reservedKv = inputIds.length;
                relay.segmentLimit = pd.decodeSegmentTokens();
                relay.submission = engine.submit(engineRequest, EngineSpans.wrap(relay, span));
            });
            return;
        }
        EngineRequest engineRequest = new EngineRequest(requestId, inputIds, maxTokens, true, highPriority, segmentIndex);
        Relay relay = new Relay(format, stream, includeUsage, maxTokens, response, callback, clientRid, 0);
        relay.submission = engine.submit(engineRequest, EngineSpans.wrap(relay, span));
    }

    private static List<Long> rooms(JsonNode room) {
        List<Long> rooms = new ArrayList<>();
        if (room == null || room.isNull()) {
            return rooms;
        }
        if (room.isArray()) {
            room.forEach(r -> rooms.add(r.asLong()));
        } else if (room.canConvertToLong()) {
            rooms.add(room.asLong());
        } else {
            throw new BadRequest("'bootstrap_room' must be an integer or an array of integers");
        }
        return rooms;
    }

    /** Decode side: long-polls every room's KV on the prefill worker's bootstrap port. */
    private void fetchKv(String host, int port, List<Long> rooms,
            java.util.function.BiConsumer<Integer, Throwable> done) {
        if (kvClient == null) {
            done.accept(null, new IllegalStateException("no KV client configured"));
            return;
        }
        java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger(rooms.size());
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger tokens = new java.util.concurrent.atomic.AtomicInteger();
        for (long room : rooms) {
            kvClient.newRequest("http://" + host + ":" + port + "/kv/" + room)
                    .timeout(pd.kvTransferTimeoutMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                    .send(new org.eclipse.jetty.client.BufferingResponseListener() {
                        @Override
                        public void onComplete(org.eclipse.jetty.client.Result result) {
                            Throwable failure = result.getFailure();
                            if (failure == null && result.getResponse().getStatus() != 200) {
                                failure = new IllegalStateException("prefill answered " + result.getResponse().getStatus()
                                        + ": " + getContentAsString());
                            }
                            if (failure != null) {
                                if (failed.compareAndSet(false, true)) {
                                    Throwable cause = failure;
                                    for (Throwable t = failure; t != null; t = t.getCause()) {
                                        if (t instanceof java.util.concurrent.TimeoutException) {
                                            cause = t;
                                        }
                                    }
                                    done.accept(null, cause);
                                }
                                return;
                            }
                            try {
                                tokens.accumulateAndGet(JSON.readTree(getContent()).path("tokens").asInt(), Math::max);
                            } catch (java.io.IOException e) {
                                // the token count is informational
                            }
                            if (pending.decrementAndGet() == 0 && !failed.get()) {
                                done.accept(tokens.get(), null);
                            }
                        }
                    });
        }
    }

    /** Prefill side: answers a decode worker's KV request once the room's prefill is done. */
    private void serveKv(String roomText, Response response, Callback callback) {
        long room;
        try {
            room = Long.parseLong(roomText);
        } catch (NumberFormatException e) {
            error(response, callback, 400, "invalid_request_error", "bad room '" + roomText + "'");
            return;
        }
        rendezvous.room(room).orTimeout(pd.kvTransferTimeoutMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                .whenComplete((tokens, failure) -> {
                    if (failure != null) {
                        boolean timeout = failure instanceof java.util.concurrent.TimeoutException;
                        error(response, callback, timeout ? 504 : 410, "kv_unavailable",
                                timeout ? "no prefill joined room " + room : "prefill for room " + room + " failed");
                        return;
                    }
                    long transferNanos = (long) (pd.kvTransferMsPer1k() * tokens / 1000.0 * 1_000_000 / speedup);
                    timers.schedule(() -> json(response, callback, 200, "{\"room\":" + room + ",\"tokens\":" + tokens + "}"),
                            transferNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
                });
    }

    private int[] inputIds(ApiKind kind, JsonNode body) {
        JsonNode ids = body.get("input_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) {
                throw new BadRequest("'input_ids' must be an array of integers");
            }
            int[] out = new int[ids.size()];
            for (int i = 0; i < out.length; i++) {
                if (!ids.get(i).canConvertToInt()) {
                    throw new BadRequest("'input_ids' must be an array of integers");
                }
                out[i] = ids.get(i).asInt();
            }
            return out;
        }
        switch (kind) {
            case CHAT:
                if (!body.path("messages").isArray() || body.get("messages").isEmpty()) {
                    throw new BadRequest("'messages' must be a non-empty array");
                }
                return encoder.encodeChat(body);
            case COMPLETIONS:
                return encoder.encodeText(joinText(body.get("prompt"), "prompt"));
            default:
                return encoder.encodeText(joinText(body.get("text"), "text"));
        }
    }

    private static String joinText(JsonNode text, String field) {
        if (text == null || text.isNull()) {
            throw new BadRequest("'" + field + "' is required");
        }
        if (text.isTextual()) {
            return text.asText();
        }
        if (text.isArray()) {
            StringBuilder joined = new StringBuilder();
            for (JsonNode part : text) {
                if (joined.length() > 0) {
                    joined.append('\n');
                }
                joined.append(part.asText());
            }
            return joined.toString();
        }
        throw new BadRequest("'" + field + "' must be a string or an array of strings");
    }

    private static int maxTokens(ApiKind kind, JsonNode body) {
        JsonNode value = kind == ApiKind.GENERATE
                ? body.path("sampling_params").get("max_new_tokens")
                : body.hasNonNull("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
        if (value == null || value.isNull()) {
            return DEFAULT_MAX_TOKENS;
        }
        if (!value.canConvertToInt() || value.asInt() < 0) {
            throw new BadRequest("the token budget must be a non-negative integer");
        }
        if (value.asInt() > MAX_TOKENS_LIMIT) {
            throw new BadRequest("the token budget must be at most " + MAX_TOKENS_LIMIT + " (got " + value.asInt() + ")");
        }
        return Math.max(1, value.asInt());
    }

    /** Relays one request's engine events to its HTTP response. */
    private final class Relay implements TokenSink {
        private final OutputFormatter format;
        private final boolean stream;
        private final boolean includeUsage;
        private final Response response;
        private final Callback callback;
        private final OrderedWriter writer;
        private final int[] outputIds;
        private final StringBuilder text = new StringBuilder();
        private int count;
        private boolean started;
        private boolean capacityEnd;
        private boolean ended;
        private final String clientRid;
        private final int outputOffset;
        volatile Engine.Submission submission;
        Runnable onPrefilled;
        java.util.function.Consumer<String> onFailed;
        long reservedKv;
        int segmentLimit;

        Relay(OutputFormatter format, boolean stream, boolean includeUsage, int maxTokens, Response response, Callback callback,
                String clientRid, int outputOffset) {
            this.clientRid = clientRid;
            this.outputOffset = outputOffset;
            this.format = format;
            this.stream = stream;
            this.includeUsage = includeUsage;
            this.response = response;
            this.callback = callback;
            this.outputIds = new int[maxTokens];
            this.writer = new OrderedWriter(response, callback, () -> {
                aborted.incrementAndGet();
                Engine.Submission s = submission;
                if (s != null) {
                    s.abort();
                }
            });
        }

        @Override
        public synchronized void onPrefillDone(int cachedTokens) {
            if (onPrefilled != null) {
                onPrefilled.run();
                onPrefilled = null;
            }
        }

        @Override
        public synchronized void onToken(int engineTokenId) {
            if (ended) {
                return;
            }
            if (onPrefilled != null) {
                onPrefillDone(0);
            }
            if (reservedKv > 0 || segmentLimit > 0) {
                boolean segmentFull = segmentLimit > 0 && count >= segmentLimit;
                if (segmentFull || !kvBudget.tryReserve(1)) {
                    capacityEnd = true;
                    Engine.Submission s = submission;
                    if (s != null) {
                        s.abort();
                    }
                    return;
                }
                reservedKv++;
            }
            // With a client rid, ids continue that request's sequence across PD continuation segments.
            int tokenId = clientRid == null ? engineTokenId
                    : io.kvroute.mock.engine.TokenIds.output(clientRid, outputOffset + count);
            String piece = encoder.decode(tokenId);
            if (count < outputIds.length) {
                outputIds[count] = tokenId;
            }
            count++;
            text.append(piece);
            if (stream) {
                startStream();
                writer.write(utf8(format.tokenEvent(tokenId, piece, text.toString(), count)), false);
            }
        }

        @Override
        public synchronized void onFinish(String finishReason, Usage usage) {
            if (ended) {
                return;
            }
            ended = true;
            releaseKv();
            if (onPrefilled != null) {
                if ("abort".equals(finishReason)) {
                    if (onFailed != null) {
                        onFailed.accept("prefill aborted");
                    }
                } else {
                    onPrefillDone(0);
                }
            }
            if (clientRid != null) {
                outputByRid.merge(clientRid, text.toString(), String::concat);
                if (pd.decode()) {
                    if (capacityEnd) {
                        generatedByRid.put(clientRid, outputOffset + count);
                    } else {
                        generatedByRid.remove(clientRid);
                    }
                }
            }
            if (capacityEnd) {
                finishReason = "length";
                usage = new Usage(usage.promptTokens(), count, usage.cachedTokens());
            }
            if ("abort".equals(finishReason) && !stream && !started) {
                writer.write(utf8(errorBody(499, "aborted", "request aborted")), true);
                return;
            }
            if (stream) {
                startStream();
                writer.write(utf8(format.finishEvents(finishReason, usage, includeUsage, text.toString(), capacityEnd)), true);
            } else {
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                writer.write(utf8(format.complete(text.toString(), outputIds, Math.min(count, outputIds.length), finishReason,
                        usage, capacityEnd)), true);
            }
        }

        private void releaseKv() {
            if (reservedKv > 0) {
                kvBudget.release(reservedKv);
                reservedKv = 0;
            }
        }

        @Override
        public synchronized void onError(int httpStatus, String errorType, String message) {
            if (ended) {
                return;
            }
            ended = true;
            releaseKv();
            if (onFailed != null) {
                onFailed.accept(message);
                onFailed = null;
            }
            if (started) {
                writer.write(utf8("data: " + errorBody(httpStatus, errorType, message) + "\n\ndata: [DONE]\n\n"), true);
                return;
            }
            response.setStatus(httpStatus);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            if (httpStatus == 429) {
                response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            }
            writer.write(utf8(errorBody(httpStatus, errorType, message)), true);
        }

        private void startStream() {
            if (!started) {
                started = true;
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
                response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            }
        }
    }

    private static ByteBuffer utf8(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    static String errorBody(int status, String type, String message) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.put("code", status);
        return root.toString();
    }

    private static void error(Response response, Callback callback, int status, String type, String message) {
        json(response, callback, status, errorBody(status, type, message));
    }

    private static void json(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, utf8(body), callback);
    }
}
