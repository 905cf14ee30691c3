package io.kvroute.mock;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineConfig;
import io.kvroute.mock.engine.EngineLoop;
import io.kvroute.mock.engine.ScheduledEngine;
import io.kvroute.mock.engine.SimpleEngine;
import io.kvroute.mock.engine.TimeModel;
import io.kvroute.mock.http.FlushCacheHandler;
import io.kvroute.mock.http.MockWorkerHandler;
import io.kvroute.mock.http.PromptEncoder;
import io.kvroute.mock.http.TokenizeCost;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.trace.RequestTracer;
import io.kvroute.scheduler.jetty.KvScheduler;
import io.kvroute.scheduler.jetty.SchedulerConfig;
import io.kvroute.scheduler.report.KvEventFormat;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The mock GPU worker: a simulated engine behind the HTTP API a real SGLang worker speaks. Runs
 * standalone ({@code main}) or in process ({@link #start(String...)}), so tests and the demo can
 * start several on ephemeral ports.
 */
@Command(name = "kvroute-mock-worker", mixinStandardHelpOptions = true,
        description = "A simulated GPU worker (engine) hosting the kvroute scheduler plugin.")
public final class MockWorkerMain implements Callable<Integer> {

    @Option(names = "--host", description = "Listen address (default 127.0.0.1).")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "Listen port; 0 picks a free one (default 0).")
    int port;

    @Option(names = "--model-id", description = "Served model id (default mock-model).")
    String modelId = "mock-model";

    @Option(names = "--role", description = "regular | prefill | decode (default regular).")
    String role = "regular";

    @Option(names = "--time-model", description = "Time-model preset: fast | h100-small | a100-medium | "
            + "sglang-long-context (default fast); the three flags below override its parts. sglang-long-context "
            + "also sets --tokenize-cost sglang-long-context.")
    String timeModelPreset = "fast";

    @Option(names = "--engine-loop", description = "Whose step loop the engine follows: lightllm (one forward per step, "
            + "prefill first, decode waits; router first-chunk gate) | sglang (chunked prefill mixed into the running "
            + "decode batch) (default lightllm). See docs/scheduler.md.")
    String engineLoop = "lightllm";

    @Option(names = "--lightllm-first-chunk-gate", arity = "1", description = "With --engine-loop lightllm, model the "
            + "router's gate that lets waiting requests into the engine only while their first chunks fit 2 x "
            + "batch_max_tokens (default true; false is for measuring what the gate hides).")
    boolean firstChunkGate = true;

    @Option(names = "--scheduling-policy", description = "vLLM's flag: fcfs or priority. priority serves waiting "
            + "requests by their 'priority' field, lower first (vllm/v1/core/sched/request_queue.py); under fcfs a "
            + "non-zero priority is a 400, as in vLLM (default fcfs).")
    String schedulingPolicy = "fcfs";

    @Option(names = "--enable-priority-scheduling", description = "SGLang's flag: serve waiting requests by their "
            + "'priority' field, higher first (srt/managers/schedule_policy.py); without it the field is ignored, as "
            + "SGLang does by default. Either flag turns priority scheduling on for both API surfaces, each reading "
            + "the field in its own engine's sense.")
    boolean enablePriorityScheduling;

    @Option(names = "--tokenize-cost", description = "Simulated engine-side tokenization time held on the tokenizer "
            + "thread: none | sglang-long-context (100 ms at 55k tokens, 580 ms at 125k) (default: sglang-long-context with --time-model "
            + "sglang-long-context, else none).")
    String tokenizeCost;

    @Option(names = "--prefill-ms-per-1k", description = "Simulated prefill milliseconds per 1,000 tokens (preset fast: 20).")
    Double prefillMsPer1k;

    @Option(names = "--decode-ms-per-step", description = "Simulated milliseconds per decode step (preset fast: 5).")
    Double decodeMsPerStep;

    @Option(names = "--step-overhead-ms", description = "Fixed simulated milliseconds per engine step (preset fast: 0.5).")
    Double stepOverheadMs;

    @Option(names = "--engine", description = "scheduled (the scheduler plugin's step loop) | simple (one timer per request) (default scheduled).")
    String engineKind = "scheduled";

    @Option(names = "--prefill-queue-strategy", description = "default | promote_shortest | hrrn (default default).")
    String prefillQueueStrategy = "default";

    @Option(names = "--batch-max-tokens", description = "Prefill tokens per step (default 16384).")
    int batchMaxTokens = 16384;

    @Option(names = "--chunked-prefill-size", description = "Largest prefill chunk per request per step (default 8192).")
    int chunkedPrefillSize = 8192;

    @Option(names = "--running-max-req-size", description = "Running request slots (default 256).")
    int runningMaxReqSize = 256;

    @Option(names = "--kv-capacity-tokens", description = "KV pool capacity in tokens (default 1048576).")
    long kvCapacityTokens = 1_048_576;

    @Option(names = "--page-size", description = "KV page size in tokens, the prefix-cache granularity (default 16).")
    int pageSize = 16;

    @Option(names = "--node-self-request-limit", arity = "0..1", fallbackValue = "true",
            description = "Admission waits for a request slot and KV (default true); false admits everything.")
    boolean nodeSelfRequestLimit = true;

    @Option(names = "--resource-wait-timeout-secs", description = "Busy (429 server_busy) after waiting this long for a slot or KV; negative waits forever (default 20).")
    double resourceWaitTimeoutSecs = 20;

    @Option(names = "--speedup", description = "Run N times faster than simulated real time (default 1).")
    double speedup = 1;

    @Option(names = "--bootstrap-port", description = "Prefill role: the KV bootstrap port; 0 picks a free one (default 0).")
    int bootstrapPort;

    @Option(names = "--decode-kv-capacity-tokens", description = "Decode role: KV tokens for decoding segments; a segment that cannot grow ends with the capacity marker; 0 = unlimited (default 0).")
    long decodeKvCapacityTokens;

    @Option(names = "--kv-transfer-ms-per-1k", description = "Prefill role: simulated KV transfer ms per 1,000 tokens (default 2).")
    double kvTransferMsPer1k = 2;

    @Option(names = "--kv-transfer-timeout-secs", description = "How long a decode worker waits for its KV (default 30).")
    double kvTransferTimeoutSecs = 30;

    @Option(names = "--decode-segment-tokens", description = "Decode role: end a segment with the KV capacity marker after N tokens; 0 = never (default 0).")
    int decodeSegmentTokens;

    @Option(names = "--load-publish-endpoint", description = "ZeroMQ PUB endpoint for load reports; port * or 0 picks a free one; "
            + "none disables (default tcp://HOST:*). Advertised in /server_info.")
    String loadPublishEndpoint;

    @Option(names = "--kv-events-endpoint", description = "ZeroMQ PUB endpoint for SGLang-format KV events (prefix-cache "
            + "pages stored/evicted), with a replay ROUTER beside it; none disables (default tcp://HOST:*). Advertised in "
            + "/server_info's kv_events block.")
    String kvEventsEndpoint;

    @Option(names = "--kv-events-hash-seed", description = "Published KV-event block hashes: none (SGLang's reproducible "
            + "page hash) or random (seeded per process, unrelated to the tokens, as vLLM's are; a router needs "
            + "--kv-events-hash tokens) (default none).")
    String kvEventsHashSeed = "none";

    @Option(names = "--tokenizer-threads", description = "Threads that tokenize text prompts, like SGLang's TokenizerManager "
            + "(default 1); 0 tokenizes on the HTTP threads.")
    int tokenizerThreads = 1;

    @Option(names = "--otlp-traces-endpoint", description = "OTLP/HTTP traces URL; continues the router's trace with engine queue/prefill/decode spans (default off).")
    String otlpTracesEndpoint;

    @Option(names = "--trace-sampling-ratio", description = "Share of new traces sampled, 0..1 (default 1).")
    double traceSamplingRatio = 1.0;

    @Option(names = "--tokenizer-path", description = "Tokenizer directory (tokenizer.json + tokenizer_config.json), "
            + "or bundled:NAME (qwen3, llama3, llama3_1, deepseek_v3, gemma3); default: a deterministic stand-in (about 4 bytes per token).")
    String tokenizerPath;

    @Option(names = "--kv-events-format", description = "Wire shape of the KV events: sglang (tagged arrays, replay "
            + "[b\"\", seq, payload], a heartbeat) or vllm (vLLM's map events and uint64 hashes, replay answers with "
            + "the topic frame, no heartbeat; vllm/distributed/kv_events.py) (default sglang).")
    String kvEventsFormat = "sglang";

    @Option(names = {"--dp-size", "--data-parallel-size"}, description = "Data-parallel ranks behind this one HTTP "
            + "server, as vLLM's --data-parallel-size with its internal load balancer: one engine (queue, prefix cache) per "
            + "rank, a request goes to the rank its X-data-parallel-rank header names, else to the lowest waiting * 4 + "
            + "running; one /metrics series and one KV-event PUB and replay socket per rank (PUB base + rank, replay base + "
            + "rank). Needs --engine-api vllm (default 1).")
    int dpSize = 1;

    @Option(names = "--kv-events-replay-endpoint", description = "ZeroMQ ROUTER endpoint of rank 0's KV-event replay "
            + "socket; rank r on its port + r (default tcp://HOST:*; with --engine-api vllm and a fixed "
            + "--kv-events-endpoint port P, P + dp-size; with --engine-api vllm, data parallel and free ports, a free range "
            + "right after the PUB range).")
    String kvEventsReplayEndpoint;

    @Option(names = "--engine-api", description = "HTTP surface: sglang (/server_info with the kv_events block) or vllm "
            + "(vLLM's /metrics, /v1/models cards, /version, no /server_info, chat ignores input_ids and renders after vLLM's "
            + "message preprocessing; implies "
            + "--kv-events-format vllm) (default sglang).")
    String engineApi = "sglang";

    @Option(names = "--enable-metrics", arity = "0..1", fallbackValue = "true", description = "SGLang surface: serve "
            + "SGLang's /metrics (sglang:num_running_reqs, num_queue_reqs, token_usage, max_total_num_tokens; with "
            + "--max-loras the sglang:lora_pool_slots_* gauges), as SGLang does with --enable-metrics; the vLLM surface "
            + "always serves its own (default false).")
    boolean enableMetrics = false;

    @Option(names = "--max-loras", description = "LoRA adapter slots (vLLM --max-loras); 0 = no LoRA (default 0).")
    int maxLoras = 0;

    @Option(names = "--lora-modules", split = ",", description = "Adapters served from the start: NAME=PATH, comma "
            + "separated (vLLM --lora-modules; default none).")
    java.util.List<String> loraModules = new java.util.ArrayList<>();

    @Option(names = "--lora-load-ms", description = "Simulated milliseconds to load an adapter into a slot (default 100).")
    double loraLoadMs = 100;

    @Option(names = "--lora-runtime-updating", arity = "0..1", fallbackValue = "true", description = "Serve the "
            + "load/unload endpoints and load unknown adapters on request, as vLLM with "
            + "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 and a resolver; off: a request for an unknown adapter is 404 (default false).")
    boolean loraRuntimeUpdating = false;

    /** A running mock worker. */
    public static final class MockWorker implements AutoCloseable {
        private final Server server;
        private final Engine engine;
        private final MockWorkerHandler handler;
        private final String baseUrl;
        private final KvScheduler scheduler;
        private AutoCloseable tokenizers;
        private io.kvroute.mock.http.VllmApi vllmApi;

        MockWorker(Server server, Engine engine, MockWorkerHandler handler, String baseUrl, KvScheduler scheduler) {
            this.server = server;
            this.engine = engine;
            this.handler = handler;
            this.baseUrl = baseUrl;
            this.scheduler = scheduler;
        }

        /** Stops publishing load reports (a drill: the router must fall back to its own counts). */
        public void stopLoadReports() {
            try {
                scheduler.stop(); // closes the publisher; /scheduler keeps answering
            } catch (Exception e) {
                throw new IllegalStateException("load publisher did not stop", e);
            }
        }

        /** The load-report endpoints this worker publishes on (empty when disabled). */
        public java.util.List<String> loadEndpoints() {
            return scheduler.loadEndpoints();
        }

        /** The Jetty-hosted scheduler component (a KV-event publisher registers its endpoint here). */
        public KvScheduler scheduler() {
            return scheduler;
        }

        public String baseUrl() {
            return baseUrl;
        }

        public Engine engine() {
            return engine;
        }

        public MockWorkerHandler handler() {
            return handler;
        }

        /** The KV-event PUB endpoints, one per data-parallel rank (empty with {@code --kv-events-endpoint none}). */
        public java.util.List<String> kvEventEndpoints() {
            KvEventReporting reporting = server.getBean(KvEventReporting.class);
            return reporting == null ? java.util.List.of() : reporting.endpoints();
        }

        /** The KV-event replay endpoints, one per data-parallel rank. */
        public java.util.List<String> kvEventReplayEndpoints() {
            KvEventReporting reporting = server.getBean(KvEventReporting.class);
            return reporting == null ? java.util.List.of() : reporting.replayEndpoints();
        }

        /** Requests served by each data-parallel rank since start (one entry without {@code --dp-size}). */
        public long[] requestsByRank() {
            if (engine instanceof io.kvroute.mock.engine.DataParallelEngine dp) {
                long[] out = new long[dp.ranks().size()];
                for (int r = 0; r < out.length; r++) {
                    out[r] = dp.requests(r);
                }
                return out;
            }
            return new long[] {handler.requests()};
        }

        /** The vLLM HTTP surface ({@code --engine-api vllm}), or null for the SGLang one. */
        public io.kvroute.mock.http.VllmApi vllmApi() {
            return vllmApi;
        }

        public Server server() {
            return server;
        }

        @Override
        public void close() {
            try {
                server.stop();
            } catch (Exception e) {
                throw new IllegalStateException("mock worker did not stop cleanly", e);
            } finally {
                handler.shutdown();
                engine.close();
                if (tokenizers != null) {
                    try {
                        tokenizers.close();
                    } catch (Exception e) {
                        // nothing left to do on shutdown
                    }
                }
            }
        }
    }

    /** Parses flags and starts a worker; returns once it is listening. */
    public static MockWorker start(String... args) throws Exception {
        MockWorkerMain options = new MockWorkerMain();
        CommandLine cli = new CommandLine(options);
        cli.setOverwrittenOptionsAllowed(true);
        cli.parseArgs(args);
        return options.startWorker();
    }

    MockWorker startWorker() throws Exception {
        if (!java.util.List.of("regular", "prefill", "decode").contains(role)) {
            throw new IllegalArgumentException("--role must be regular, prefill or decode (got '" + role + "')");
        }
        Long hashSeed = kvEventsHashSeed(kvEventsHashSeed);
        TimeModel preset = TimeModel.preset(timeModelPreset);
        // A decode node receives the KV already computed: its prefill costs nothing.
        double prefill = role.equals("decode") ? 0 : prefillMsPer1k != null ? prefillMsPer1k : preset.prefillMsPer1kTokens();
        TimeModel timeModel = new TimeModel(prefill, decodeMsPerStep != null ? decodeMsPerStep : preset.decodeMsPerStep(),
                stepOverheadMs != null ? stepOverheadMs : preset.stepOverheadMs(), speedup);
        boolean vllmApi = switch (engineApi.toLowerCase(java.util.Locale.ROOT)) {
            case "sglang" -> false;
            case "vllm" -> true;
            default -> throw new IllegalArgumentException("--engine-api must be sglang or vllm (got '" + engineApi + "')");
        };
        if (dpSize < 1 || dpSize > 64) {
            throw new IllegalArgumentException("--dp-size must be 1..64 (got " + dpSize + ")");
        }
        if (dpSize > 1 && !vllmApi) {
            throw new IllegalArgumentException("--dp-size above 1 needs --engine-api vllm");
        }
        boolean priorityScheduling = switch (schedulingPolicy.toLowerCase(java.util.Locale.ROOT)) {
            case "fcfs" -> enablePriorityScheduling;
            case "priority" -> true;
            default -> throw new IllegalArgumentException("--scheduling-policy must be fcfs or priority (got '"
                    + schedulingPolicy + "')");
        };
        if (!engineKind.equals("simple") && !engineKind.equals("scheduled")) {
            throw new IllegalArgumentException("--engine must be scheduled or simple (got '" + engineKind + "')");
        }
        java.util.List<Engine> rankEngines = new java.util.ArrayList<>();
        for (int r = 0; r < dpSize; r++) {
            rankEngines.add(engineKind.equals("simple") ? new SimpleEngine(timeModel)
                    : ScheduledEngine.start(new EngineConfig(prefillQueueStrategy, batchMaxTokens, chunkedPrefillSize,
                            runningMaxReqSize, kvCapacityTokens, pageSize, nodeSelfRequestLimit, resourceWaitTimeoutSecs,
                            timeModel, EngineLoop.forName(engineLoop), firstChunkGate, priorityScheduling)));
        }
        Engine engine = dpSize == 1 ? rankEngines.get(0) : new io.kvroute.mock.engine.DataParallelEngine(rankEngines);
        QueuedThreadPool threads = new QueuedThreadPool(200, 4);
        threads.setName("mock-worker");
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setOutputAggregationSize(0);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        ServerConnector bootstrap = null;
        if (role.equals("prefill")) {
            bootstrap = new ServerConnector(server, new HttpConnectionFactory(http));
            bootstrap.setHost(host);
            bootstrap.setPort(bootstrapPort);
            server.addConnector(bootstrap);
        }
        org.eclipse.jetty.client.HttpClient kvClient = new org.eclipse.jetty.client.HttpClient();
        kvClient.setMaxConnectionsPerDestination(1024);
        server.addBean(kvClient);
        io.kvroute.mock.pd.PdOptions pd = new io.kvroute.mock.pd.PdOptions(role, kvTransferMsPer1k,
                (long) (kvTransferTimeoutSecs * 1000), decodeSegmentTokens);
        Map<String, Object> staticInfo = new LinkedHashMap<>();
        MockWorkerHandler[] handlerRef = new MockWorkerHandler[1];
        KvScheduler[] schedulerRef = new KvScheduler[1];
        PromptEncoder encoder = PromptEncoder.standIn();
        io.kvroute.router.tokenize.TokenizerRegistry tokenizers = null;
        if (tokenizerPath != null) {
            String dir = BundledTokenizer.resolve(tokenizerPath);
            // a vLLM engine preprocesses chats its own way before the template (vLLM vllm/entrypoints/chat_utils.py:
            // add_generation_prompt as asked, a trailing assistant turn kept, text parts joined), SGLang its own
            tokenizers = io.kvroute.router.tokenize.TokenizerRegistry.load(java.util.Map.of(modelId, java.nio.file.Path.of(dir)),
                    0, vllmApi ? io.kvroute.router.worker.EngineType.VLLM : io.kvroute.router.worker.EngineType.SGLANG);
            encoder = new io.kvroute.mock.http.TokenizerPromptEncoder(tokenizers.forModel(modelId).orElseThrow(),
                    tokenizers.engine());
        }
        MockWorkerHandler handler = new MockWorkerHandler(engine, encoder, modelId, () -> {
            Map<String, Object> info = new LinkedHashMap<>(staticInfo);
            info.put("requests_total", handlerRef[0].requests());
            info.put("aborted_requests", handlerRef[0].abortedRequests());
            info.put("kv_used_tokens", handlerRef[0].kvBudget().usedTokens());
            info.putAll(schedulerRef[0].serverInfo()); // the kv_events block (SGLang shape) + dp_size
            return info;
        }, pd, decodeKvCapacityTokens, kvClient, speedup);
        handlerRef[0] = handler;
        handler.priorityScheduling(priorityScheduling);
        handler.useTokenizerThreads(tokenizerThreads);
        handler.useTokenizeCost(TokenizeCost.forName(tokenizeCost != null ? tokenizeCost
                : timeModelPreset.equals("sglang-long-context") || timeModelPreset.equals("seed003")
                        ? "sglang-long-context" : "none"));
        if (!(traceSamplingRatio >= 0 && traceSamplingRatio <= 1)) {
            throw new IllegalArgumentException("--trace-sampling-ratio must be between 0 and 1 (got '" + traceSamplingRatio + "')");
        }
        handler.useTracer(RequestTracer.create(otlpTracesEndpoint, traceSamplingRatio,
                "kvroute-mock-worker"));
        io.kvroute.mock.http.VllmApi vllm = null;
        io.kvroute.mock.lora.LoraApi lora = loraApi(vllmApi);
        if (vllmApi) {
            handler.ignoreChatInputIds();
            handler.honourDataParallelRankHeader();
            handler.readPriorityAsVllm();
            // vLLM's routes (and its missing /server_info) ahead of the worker's own; generation falls through
            vllm = new io.kvroute.mock.http.VllmApi(engine, modelId);
            server.setHandler(lora == null ? new Handler.Sequence(vllm, handler) : new Handler.Sequence(lora, vllm, handler));
        } else {
            // SGLang's /flush_cache (and, with --enable-metrics, /metrics) ahead of the worker's own routes
            java.util.List<Handler> sglang = new java.util.ArrayList<>();
            if (lora != null) {
                sglang.add(lora);
            }
            if (enableMetrics) {
                io.kvroute.mock.http.SglangMetricsApi metrics = new io.kvroute.mock.http.SglangMetricsApi(engine, modelId);
                if (lora != null) {
                    metrics.addMetrics(lora::sglangMetrics);
                }
                sglang.add(metrics);
            }
            sglang.add(new FlushCacheHandler(engine));
            sglang.add(handler);
            server.setHandler(new Handler.Sequence(sglang.toArray(Handler[]::new)));
        }
        if (lora != null) {
            handler.useLora(lora);
            if (vllm != null) {
                vllm.addMetrics(lora::metrics);
            }
        }
        // The scheduler plugin's Jetty component: /scheduler, the load publisher's lifecycle, the advert.
        String endpoint = loadPublishEndpoint == null ? "tcp://" + host + ":*" : loadPublishEndpoint;
        KvScheduler scheduler = KvScheduler.mount(server, SchedulerConfig.defaults()
                .withLoadEndpoint(endpoint).withServeServerInfo(false));
        schedulerRef[0] = scheduler;
        scheduler.attach(new EngineScheduling(engine, handler::pendingKvTransfers));
        String eventsEndpoint = kvEventsEndpoint == null ? "tcp://" + host + ":*" : kvEventsEndpoint;
        if (!eventsEndpoint.equals("none")) {
            String replayEndpoint = kvEventsReplayEndpoint;
            if (replayEndpoint == null && vllmApi) {
                // vLLM's layout: rank r on base + r for both sockets, the replay range after the PUB range
                Integer fixed = fixedPort(eventsEndpoint);
                if (fixed == null && dpSize > 1) {
                    int base = freePortRange(host, 2 * dpSize);
                    eventsEndpoint = "tcp://" + host + ":" + base;
                    fixed = base;
                }
                replayEndpoint = fixed == null ? null : "tcp://" + host + ":" + (fixed + dpSize);
            }
            // bound on start, registered with the scheduler's kv_events block, closed on stop
            server.addBean(new KvEventReporting(eventsEndpoint, replayEndpoint == null ? "tcp://" + host + ":*"
                    : replayEndpoint, host, engine, scheduler, hashSeed,
                    vllmApi ? KvEventFormat.VLLM : kvEventFormat(kvEventsFormat), lora == null ? null : lora.slots()));
        }
        server.start();
        String baseUrl = "http://" + host + ":" + connector.getLocalPort();
        staticInfo.put("model_id", modelId);
        staticInfo.put("model_path", modelId);
        staticInfo.put("role", role);
        staticInfo.put("bootstrap_port", bootstrap == null ? null : bootstrap.getLocalPort());
        staticInfo.put("decode_kv_capacity_tokens", decodeKvCapacityTokens);
        staticInfo.put("engine", engineKind);
        staticInfo.put("chunked_prefill_size", chunkedPrefillSize);
        staticInfo.put("batch_max_tokens", batchMaxTokens);
        staticInfo.put("page_size", engine.info().pageSize());
        staticInfo.put("max_total_num_tokens", engine.info().maxTotalNumTokens());
        staticInfo.put("max_running_requests", engine.info().maxRunningRequests());
        staticInfo.put("prefill_queue_strategy", engine.info().prefillQueueStrategy());
        staticInfo.put("engine_loop", engine.info().engineLoop());
        staticInfo.put("dp_size", dpSize);
        staticInfo.put("time_model", timeModel.toString());
        staticInfo.put("tokenizer", tokenizerPath == null ? "stand-in" : tokenizerPath);
        MockWorker worker = new MockWorker(server, engine, handler, baseUrl, scheduler);
        worker.tokenizers = tokenizers;
        worker.vllmApi = vllm;
        return worker;
    }

    /** The port of {@code tcp://host:PORT}, or null for a wildcard port ({@code *}, {@code 0}). */
    private static Integer fixedPort(String endpoint) {
        String port = endpoint.substring(endpoint.lastIndexOf(':') + 1);
        if (port.equals("*") || port.equals("0")) {
            return null;
        }
        try {
            return Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--kv-events-endpoint must be tcp://HOST:PORT or tcp://HOST:* (got '"
                    + endpoint + "')");
        }
    }

    /**
     * A base port whose next {@code count} ports were all free a moment ago (vLLM's fixed layout needs
     * consecutive ports; a race with another process shows as a bind failure at start).
     */
    /** {@link #freePortRange} for tests that lay out fixed ports themselves. */
    public static int freePortRangeForTests(String host, int count) {
        return freePortRange(host, count);
    }

    static int freePortRange(String host, int count) {
        java.util.Random random = new java.util.Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = 20_000 + random.nextInt(40_000 - count);
            boolean free = true;
            for (int p = base; p < base + count && free; p++) {
                try (java.net.ServerSocket socket = new java.net.ServerSocket()) {
                    socket.setReuseAddress(false);
                    socket.bind(new java.net.InetSocketAddress(host, p));
                } catch (java.io.IOException e) {
                    free = false;
                }
            }
            if (free) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports on " + host);
    }

    /** The LoRA surface for {@code --max-loras N > 0}, or null; adapter loads are timed on a daemon thread. */
    private io.kvroute.mock.lora.LoraApi loraApi(boolean vllmApi) {
        if (maxLoras < 0) {
            throw new IllegalArgumentException("--max-loras must be >= 0 (got " + maxLoras + ")");
        }
        if (!(loraLoadMs >= 0 && loraLoadMs <= 600_000)) {
            throw new IllegalArgumentException("--lora-load-ms must be within 0..600000 (got " + loraLoadMs + ")");
        }
        if (maxLoras == 0) {
            return null;
        }
        Map<String, String> preloaded = new LinkedHashMap<>();
        for (String entry : loraModules) {
            int eq = entry.indexOf('=');
            if (eq <= 0 || eq == entry.length() - 1) {
                throw new IllegalArgumentException("--lora-modules '" + entry + "' is not NAME=PATH");
            }
            preloaded.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mock-lora-loads");
            t.setDaemon(true);
            return t;
        });
        io.kvroute.mock.lora.LoraSlots slots = new io.kvroute.mock.lora.LoraSlots(maxLoras,
                (long) (loraLoadMs * 1_000_000 / speedup), loraRuntimeUpdating, preloaded,
                (task, delayNanos) -> timer.schedule(task, delayNanos, java.util.concurrent.TimeUnit.NANOSECONDS));
        return new io.kvroute.mock.lora.LoraApi(slots, modelId, vllmApi ? "vllm" : "sglang",
                () -> System.currentTimeMillis() / 1000.0);
    }

    /** Null for SGLang's hashes; a fresh random seed for {@code random}. */
    private static KvEventFormat kvEventFormat(String flag) {
        return switch (flag.toLowerCase(java.util.Locale.ROOT)) {
            case "sglang" -> KvEventFormat.SGLANG;
            case "vllm" -> KvEventFormat.VLLM;
            default -> throw new IllegalArgumentException("--kv-events-format must be sglang or vllm (got '" + flag + "')");
        };
    }

    private static Long kvEventsHashSeed(String flag) {
        return switch (flag) {
            case "none" -> null;
            case "random" -> new SecureRandom().nextLong();
            default -> throw new IllegalArgumentException("--kv-events-hash-seed must be none or random (got '" + flag + "')");
        };
    }

    @Override
    public Integer call() throws Exception {
        MockWorker worker = startWorker();
        Runtime.getRuntime().addShutdownHook(new Thread(worker::close, "mock-worker-shutdown"));
        System.out.println("mock GPU worker listening on " + worker.baseUrl());
        worker.server().join();
        return 0;
    }

    /**
     * Prints the usage (or version) and returns true when {@code args} ask for {@code --help} or
     * {@code --version}; for callers that start a worker through {@link #start}, which does not.
     */
    public static boolean printHelpIfRequested(java.io.PrintWriter out, String... args) {
        CommandLine cli = new CommandLine(new MockWorkerMain());
        cli.setOverwrittenOptionsAllowed(true);
        return RouterOptions.printHelpIfRequested(cli, out, args);
    }

    /**
     * A flag value the worker refuses ({@link IllegalArgumentException} while starting) ends the
     * command with its message and exit status 2, like a value picocli itself rejects, not a stack trace.
     */
    public static final CommandLine.IExecutionExceptionHandler BAD_FLAG_VALUE = (failure, cli, parsed) -> {
        if (failure instanceof IllegalArgumentException) {
            cli.getErr().println(cli.getCommandName() + ": " + failure.getMessage());
            return 2;
        }
        throw failure;
    };

    public static void main(String[] args) {
        System.exit(new CommandLine(new MockWorkerMain()).setExecutionExceptionHandler(BAD_FLAG_VALUE).execute(args));
    }
}
