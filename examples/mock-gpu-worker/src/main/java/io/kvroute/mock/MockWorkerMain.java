package io.kvroute.mock;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.SimpleEngine;
import io.kvroute.mock.engine.TimeModel;
import io.kvroute.mock.http.MockWorkerHandler;
import io.kvroute.mock.http.PromptEncoder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
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

    @Option(names = "--prefill-ms-per-1k", description = "Simulated prefill milliseconds per 1,000 tokens (default 20).")
    double prefillMsPer1k = 20;

    @Option(names = "--decode-ms-per-step", description = "Simulated milliseconds per decode step (default 5).")
    double decodeMsPerStep = 5;

    @Option(names = "--step-overhead-ms", description = "Fixed simulated milliseconds per engine step (default 0.5).")
    double stepOverheadMs = 0.5;

    @Option(names = "--speedup", description = "Run N times faster than simulated real time (default 1).")
    double speedup = 1;

    @Option(names = "--bootstrap-port", description = "Prefill role: the KV bootstrap port; 0 picks a free one (default 0).")
    int bootstrapPort;

    @Option(names = "--kv-capacity-tokens", description = "Decode role: KV capacity in tokens shared by running requests; 0 = unlimited (default 0).")
    long kvCapacityTokens;

    @Option(names = "--kv-transfer-ms-per-1k", description = "Prefill role: simulated KV transfer ms per 1,000 tokens (default 2).")
    double kvTransferMsPer1k = 2;

    @Option(names = "--kv-transfer-timeout-secs", description = "How long a decode worker waits for its KV (default 30).")
    double kvTransferTimeoutSecs = 30;

    @Option(names = "--decode-segment-tokens", description = "Decode role: end a segment with the KV capacity marker after N tokens; 0 = never (default 0).")
    int decodeSegmentTokens;

    @Option(names = "--tokenizer-path", description = "Tokenizer directory (tokenizer.json + tokenizer_config.json), "
            + "or bundled:qwen3; default: a deterministic stand-in (about 4 bytes per token).")
    String tokenizerPath;

    /** A running mock worker. */
    public static final class MockWorker implements AutoCloseable {
        private final Server server;
        private final Engine engine;
        private final MockWorkerHandler handler;
        private final String baseUrl;

        MockWorker(Server server, Engine engine, MockWorkerHandler handler, String baseUrl) {
            this.server = server;
            this.engine = engine;
            this.handler = handler;
            this.baseUrl = baseUrl;
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
        // A decode node receives the KV already computed: its prefill costs nothing.
        TimeModel timeModel = new TimeModel(role.equals("decode") ? 0 : prefillMsPer1k, decodeMsPerStep, stepOverheadMs, speedup);
        Engine engine = new SimpleEngine(timeModel);
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
        PromptEncoder encoder = PromptEncoder.standIn();
        io.kvroute.router.tokenize.TokenizerRegistry tokenizers = null;
        if (tokenizerPath != null) {
            String dir = BundledTokenizer.resolve(tokenizerPath);
            tokenizers = io.kvroute.router.tokenize.TokenizerRegistry.load(java.util.Map.of(modelId, java.nio.file.Path.of(dir)));
            encoder = new io.kvroute.mock.http.TokenizerPromptEncoder(tokenizers.forModel(modelId).orElseThrow());
        }
        MockWorkerHandler handler = new MockWorkerHandler(engine, encoder, modelId, () -> {
            Map<String, Object> info = new LinkedHashMap<>(staticInfo);
            info.put("requests_total", handlerRef[0].requests());
            info.put("aborted_requests", handlerRef[0].abortedRequests());
            info.put("kv_used_tokens", handlerRef[0].kvBudget().usedTokens());
            return info;
        }, pd, kvCapacityTokens, kvClient, speedup);
        handlerRef[0] = handler;
        server.setHandler(handler);
        server.start();
        String baseUrl = "http://" + host + ":" + connector.getLocalPort();
        staticInfo.put("model_id", modelId);
        staticInfo.put("model_path", modelId);
        staticInfo.put("role", role);
        staticInfo.put("bootstrap_port", bootstrap == null ? null : bootstrap.getLocalPort());
        staticInfo.put("kv_capacity_tokens", kvCapacityTokens);
        staticInfo.put("page_size", engine.info().pageSize());
        staticInfo.put("max_total_num_tokens", engine.info().maxTotalNumTokens());
        staticInfo.put("max_running_requests", engine.info().maxRunningRequests());
        staticInfo.put("prefill_queue_strategy", engine.info().prefillQueueStrategy());
        staticInfo.put("dp_size", 1);
        staticInfo.put("time_model", timeModel.toString());
        staticInfo.put("tokenizer", tokenizerPath == null ? "stand-in" : tokenizerPath);
        return new MockWorker(server, engine, handler, baseUrl);
    }

    @Override
    public Integer call() throws Exception {
        MockWorker worker = startWorker();
        Runtime.getRuntime().addShutdownHook(new Thread(worker::close, "mock-worker-shutdown"));
        System.out.println("mock GPU worker listening on " + worker.baseUrl());
        worker.server().join();
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new MockWorkerMain()).execute(args));
    }
}
