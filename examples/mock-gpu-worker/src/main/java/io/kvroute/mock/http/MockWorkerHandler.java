package io.kvroute.mock.http;

import static io.kvroute.mock.http.Replies.JSON;
import static io.kvroute.mock.http.Replies.error;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.engine.DataParallelEngine;
import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineRequest;
import io.kvroute.mock.http.Replies.BadRequest;
import io.kvroute.mock.pd.KvBudget;
import io.kvroute.mock.pd.KvRendezvous;
import io.kvroute.mock.pd.PdOptions;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.router.trace.TraceSpan;
import io.kvroute.scheduler.queue.Priorities;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.eclipse.jetty.client.HttpClient;
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
 * <p>The endpoint families live apart: the generation request's fields in both API families
 * ({@link RequestBodies}: OpenAI's chat and completions, SGLang's native {@code /generate}), the relay
 * of engine events to the response ({@link Relay}), the PD KV hand-off ({@link PdKvTransfer}) and
 * the GET endpoints ({@link AdminEndpoints}: {@code /health}, {@code /server_info}, {@code /v1/models},
 * {@code /scheduler}, {@code /debug/requests}). This class routes paths and admits generation
 * requests into the engine.
 */
public final class MockWorkerHandler extends Handler.Abstract {

    private static final int MAX_BODY_BYTES = 64 << 20;
    private static final int RECENT_BODIES = 64;

    private final Engine engine;
    private final PromptEncoder encoder;
    private final String modelId;
    private volatile boolean ignoreChatInputIds;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong aborted = new AtomicLong();
    private final ArrayDeque<JsonNode> recent = new ArrayDeque<>(); // guarded by itself
    private volatile boolean healthy = true;
    private final PdOptions pd;
    private final PdKvTransfer transfer;
    private final AdminEndpoints admin;
    private final double speedup;

    public MockWorkerHandler(Engine engine, PromptEncoder encoder, String modelId, Supplier<Map<String, Object>> serverInfo) {
        this(engine, encoder, modelId, serverInfo, PdOptions.regular(), 0, null, 1.0);
    }

    public MockWorkerHandler(Engine engine, PromptEncoder encoder, String modelId, Supplier<Map<String, Object>> serverInfo,
            PdOptions pd, long kvCapacityTokens, HttpClient kvClient, double speedup) {
        super(InvocationType.NON_BLOCKING);
        this.engine = Objects.requireNonNull(engine, "engine");
        this.encoder = Objects.requireNonNull(encoder, "encoder");
        this.modelId = Objects.requireNonNull(modelId, "modelId");
        this.pd = Objects.requireNonNull(pd, "pd");
        this.transfer = new PdKvTransfer(pd, kvCapacityTokens, kvClient, speedup);
        this.admin = new AdminEndpoints(engine, modelId, Objects.requireNonNull(serverInfo, "serverInfo"),
                () -> healthy, this::recentBodies);
        this.speedup = speedup;
    }

    private volatile RequestTracer tracer = RequestTracer.off();
    private final AtomicInteger injectedFailures = new AtomicInteger();
    private final AtomicInteger generationsInFlight = new AtomicInteger();
    private final AtomicInteger peakGenerationsInFlight = new AtomicInteger();
    private volatile int injectedStatus;

    /**
     * Fault injection for tests and drills: the next {@code count} generation requests are answered
     * at once with {@code status} (429 comes as {@code server_busy} with {@code Retry-After}).
     */
    public void injectFailures(int status, int count) {
        injectedStatus = status;
        injectedFailures.set(count);
    }

    /**
     * Decode role: requests admitted but still waiting for their KV from the prefill node. Real PD
     * decode engines count their transfer queue as waiting work, so the load report does too.
     */
    public int pendingKvTransfers() {
        return transfer.pendingKvTransfers();
    }

    private ExecutorService tokenizerManager;
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
            tokenizerManager = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "mock-tokenizer-manager");
                t.setDaemon(true);
                return t;
            });
        }
    }

    /** The output text this worker produced for a client {@code rid} (all segments it served). */
    public String outputFor(String rid) {
        return transfer.outputFor(rid);
    }

    public KvBudget kvBudget() {
        return transfer.kvBudget();
    }

    public KvRendezvous rendezvous() {
        return transfer.rendezvous();
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
        transfer.shutdown();
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

    /** The most generation requests this worker was answering at once (tests read how much the router piled on it). */
    public int peakGenerationsInFlight() {
        return peakGenerationsInFlight.get();
    }

    /**
     * Chat requests drop {@code input_ids} and are tokenized from their messages, as vLLM's chat does
     * ({@code --engine-api vllm}; {@link #recentBodies} still shows what arrived).
     */
    public void ignoreChatInputIds() {
        ignoreChatInputIds = true;
    }

    private volatile boolean priorityInVllmSense;
    private volatile boolean priorityScheduling;

    /**
     * Reads a request's {@code priority} as vLLM does: lower is earlier, and a non-zero value on an engine
     * without priority scheduling is a 400 (vLLM {@code vllm/v1/engine/processor.py}: "Got priority N but
     * Priority scheduling is not enabled."). Without this call the field is read as SGLang does: higher is
     * earlier, ignored without priority scheduling ({@code srt/managers/scheduler.py},
     * {@code abort_on_priority_when_disabled} off by default).
     */
    public void readPriorityAsVllm() {
        priorityInVllmSense = true;
    }

    /** Whether the engine runs priority scheduling (set with the engine's configuration). */
    public void priorityScheduling(boolean on) {
        priorityScheduling = on;
    }

    /** The request's priority in the scheduler's normal form (lower first). */
    private int requestPriority(JsonNode body) {
        int value = RequestBodies.priority(body);
        if (value != 0 && priorityInVllmSense && !priorityScheduling) {
            throw new BadRequest("Got priority " + value + " but Priority scheduling is not enabled.");
        }
        return Priorities.requestPriority(value, priorityInVllmSense);
    }

    /** The request header vLLM reads a pinned data-parallel rank from (vLLM {@code vllm/entrypoints/generate/base/serving.py}). */
    public static final String DATA_PARALLEL_RANK_HEADER = "X-data-parallel-rank";
    private volatile boolean honourRankHeader;

    /**
     * Serves a request on the rank its {@value #DATA_PARALLEL_RANK_HEADER} header names (vLLM's API);
     * without the header a {@link DataParallelEngine} picks the least loaded rank. A value that is not a
     * rank of this worker is a 400.
     */
    public void honourDataParallelRankHeader() {
        honourRankHeader = true;
    }

    /** The pinned rank of a request, -1 when none; a {@link BadRequest} when the header is unusable. */
    private int pinnedRank(Request request) {
        String header = honourRankHeader ? request.getHeaders().get(DATA_PARALLEL_RANK_HEADER) : null;
        if (header == null) {
            return -1;
        }
        int ranks = engine instanceof DataParallelEngine dp ? dp.ranks().size() : 1;
        try {
            int rank = Integer.parseInt(header.trim());
            if (rank >= 0 && rank < ranks) {
                return rank;
            }
        } catch (NumberFormatException e) {
            // falls through to the error
        }
        throw new BadRequest(DATA_PARALLEL_RANK_HEADER + " '" + header + "' is not a data parallel rank of this "
                + "server (0.." + (ranks - 1) + ")");
    }

    private Engine.Submission submit(EngineRequest request, io.kvroute.mock.engine.TokenSink sink, int rank) {
        return engine instanceof DataParallelEngine dp ? dp.submit(request, sink, rank) : engine.submit(request, sink);
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
            Callback tracedOnly = span == TraceSpan.NOOP ? callback
                    : Callback.from(callback, () -> span.tag("status", response.getStatus()).end());
            peakGenerationsInFlight.accumulateAndGet(generationsInFlight.incrementAndGet(), Math::max);
            Callback traced = Callback.from(() -> {
                generationsInFlight.decrementAndGet();
                tracedOnly.succeeded();
            }, failure -> {
                generationsInFlight.decrementAndGet();
                tracedOnly.failed(failure);
            });
            int rank;
            try {
                rank = pinnedRank(request);
            } catch (BadRequest e) {
                error(response, traced, 400, "invalid_request_error", e.getMessage());
                return true;
            }
            Content.Source.asByteArrayAsync(request, MAX_BODY_BYTES).whenComplete((body, failure) -> {
                if (failure != null) {
                    error(response, traced, 413, "request_too_large", "body unreadable or over " + MAX_BODY_BYTES + " bytes");
                    return;
                }
                try {
                    generate(kind, body, response, traced, span, rank);
                } catch (BadRequest e) {
                    error(response, traced, 400, "invalid_request_error", e.getMessage());
                } catch (RuntimeException e) {
                    failure(response, traced, e);
                }
            });
            return true;
        }
        if (path.startsWith("/kv/") && "GET".equals(request.getMethod())) {
            transfer.serveKv(path.substring(4), response, callback);
            return true;
        }
        admin.handle(path, request.getMethod(), response, callback);
        return true;
    }

    private void generate(ApiKind kind, byte[] bytes, Response response, Callback callback, TraceSpan span, int rank) {
        JsonNode received;
        try {
            received = JSON.readTree(bytes);
        } catch (IOException e) {
            throw new BadRequest("invalid JSON body");
        }
        if (received == null || !received.isObject()) {
            throw new BadRequest("the request body must be a JSON object");
        }
        // vLLM's chat drops input_ids; recentBodies still shows what arrived
        JsonNode body = ignoreChatInputIds && kind == ApiKind.CHAT && received.has("input_ids")
                ? ((ObjectNode) received.deepCopy()).without("input_ids") : received;
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
        int maxTokens = RequestBodies.maxTokens(kind, body);
        io.kvroute.mock.lora.LoraApi loraApi = lora;
        String adapter = loraApi == null ? null : loraApi.adapterOf(body);
        if (adapter != null) {
            // a LoRA request waits for its adapter's slot, then runs under the adapter's cache salt (mock.lora)
            loraApi.run(adapter, response, callback, (salt, released) -> {
                try {
                    admit(kind, body, io.kvroute.mock.lora.LoraSlots.salted(RequestBodies.inputIds(kind, body, encoder), salt), maxTokens,
                            response, released, span, rank);
                } catch (BadRequest e) {
                    error(response, released, 400, "invalid_request_error", e.getMessage());
                } catch (RuntimeException e) {
                    failure(response, released, e);
                }
            });
            return;
        }
        if (body.hasNonNull("input_ids") || tokenizerManager == null) {
            admit(kind, body, RequestBodies.inputIds(kind, body, encoder), maxTokens, response, callback, span, rank);
            return;
        }
        // Like SGLang's TokenizerManager: text is tokenized by a small pool (one thread by default), so
        // under load requests queue for tokenization; forwarded input_ids skip this queue entirely.
        tokenizerManager.execute(() -> {
            try {
                long startNanos = System.nanoTime();
                int[] ids = RequestBodies.inputIds(kind, body, encoder);
                TokenizeCost.holdTokenizer(tokenizeCost, ids.length, System.nanoTime() - startNanos, speedup);
                admit(kind, body, ids, maxTokens, response, callback, span, rank);
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
            TraceSpan span, int rank) {
        if (inputIds.length == 0) {
            throw new BadRequest("the prompt is empty");
        }
        String requestId = body.path("rid").asText(kind.name().toLowerCase() + "-" + UUID.randomUUID());
        int segmentIndex = body.path("segment_index").asInt(0);
        boolean highPriority = body.path("high_priority_request").asBoolean(false);
        int priority = requestPriority(body);
        boolean stream = body.path("stream").asBoolean(false);
        boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
        String clientRid = body.hasNonNull("rid") && body.get("rid").isTextual() ? body.get("rid").asText() : null;
        List<Long> rooms = RequestBodies.rooms(body.get("bootstrap_room"));
        OutputFormatter format = new OutputFormatter(kind, requestId, body.path("model").asText(modelId));
        if (pd.prefill() && !rooms.isEmpty()) {
            // A prefill node computes the KV (and the first token) and hands the KV to the decode node.
            EngineRequest engineRequest = new EngineRequest(requestId, inputIds, 1, true, highPriority, segmentIndex, priority);
            Relay relay = relay(format, stream, includeUsage, 1, response, callback, clientRid, 0);
            relay.onPrefilled = () -> rooms.forEach(room -> transfer.rendezvous().ready(room, inputIds.length));
            relay.onFailed = reason -> rooms.forEach(room -> transfer.rendezvous().failed(room, reason));
            relay.submission = submit(engineRequest, EngineSpans.wrap(relay, span), rank);
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
            int startOffset = transfer.continuationOffset(clientRid, segmentIndex);
            transfer.fetchKv(bootstrapHost, bootstrapPort, rooms, (tokens, failure) -> {
                if (failure != null) {
                    int status = failure instanceof TimeoutException ? 504 : 502;
                    error(response, callback, status, "kv_transfer_failed", "KV transfer from prefill " + bootstrapHost + ":"
                            + bootstrapPort + " failed: " + failure.getMessage());
                    return;
                }
                if (!transfer.kvBudget().tryReserve(inputIds.length)) {
                    error(response, callback, 429, "server_busy", "decode KV capacity exhausted; retry later");
                    return;
                }
                EngineRequest engineRequest = new EngineRequest(requestId, inputIds, maxTokens, true, highPriority, segmentIndex, priority);
                Relay relay = relay(format, stream, includeUsage, maxTokens, response, callback, clientRid, startOffset);
                relay.reservedKv = inputIds.length;
                relay.segmentLimit = pd.decodeSegmentTokens();
                relay.submission = submit(engineRequest, EngineSpans.wrap(relay, span), rank);
            });
            return;
        }
        EngineRequest engineRequest = new EngineRequest(requestId, inputIds, maxTokens, true, highPriority, segmentIndex, priority);
        Relay relay = relay(format, stream, includeUsage, maxTokens, response, callback, clientRid, 0);
        relay.submission = submit(engineRequest, EngineSpans.wrap(relay, span), rank);
    }

    private Relay relay(OutputFormatter format, boolean stream, boolean includeUsage, int maxTokens, Response response,
            Callback callback, String clientRid, int outputOffset) {
        return new Relay(format, stream, includeUsage, maxTokens, response, callback, clientRid, outputOffset, encoder,
                transfer, aborted);
    }
}
