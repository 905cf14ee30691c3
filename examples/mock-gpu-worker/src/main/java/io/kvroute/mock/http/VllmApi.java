package io.kvroute.mock.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineInfo;
import io.kvroute.mock.engine.EngineStats;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP surface of a vLLM engine ({@code --engine-api vllm}), answered ahead of
 * {@link MockWorkerHandler}, which keeps generation and {@code /health}. Each route follows vLLM's
 * own code:
 * <ul>
 *   <li>{@code GET /metrics}: the Prometheus exposition of vLLM {@code vllm/v1/metrics/loggers.py}
 *       ({@code PrometheusStatLogger}): gauges {@code vllm:num_requests_running},
 *       {@code vllm:num_requests_waiting}, {@code vllm:kv_cache_usage_perc} (a fraction 0..1) labelled
 *       {@code engine} (the dp rank) and {@code model_name}, and the info gauge
 *       {@code vllm:cache_config_info} with the cache settings as labels; labels sorted by name and
 *       values printed as floats, as {@code prometheus_client}'s {@code generate_latest} does. One
 *       series per data-parallel rank, {@code engine="<rank>"} (vLLM labels each engine core's series
 *       with its index), rank 0 alone without {@code --dp-size}.</li>
 *   <li>{@code GET /v1/models}: vLLM's {@code ModelCard} ({@code vllm/entrypoints/openai/models/serving.py}):
 *       {@code owned_by "vllm"}, {@code root}, {@code parent: null}, {@code max_model_len}. Adapter
 *       cards (with {@code parent}) are left to whoever adds adapters ({@link #modelCards}).</li>
 *   <li>{@code GET /version}: {@code {"version": ...}} ({@code vllm/entrypoints/serve/instrumentator/basic.py}).</li>
 *   <li>No {@code /server_info}: vLLM serves it only with {@code VLLM_SERVER_DEV_MODE=1}
 *       ({@code vllm/entrypoints/serve/dev/server_info/api_router.py}); 404 here.</li>
 * </ul>
 * Chat ignores {@code input_ids} (vLLM's chat request has no such field,
 * {@code vllm/entrypoints/openai/chat_completion/protocol.py}): set on the handler with
 * {@link MockWorkerHandler#ignoreChatInputIds}. Stateless apart from the engine it reads and the
 * {@link #failMetrics} drill; thread-safe.
 */
public final class VllmApi extends Handler.Abstract {

    /** The version string {@code /version} reports. */
    public static final String VERSION = "0.11.0+kvroute.mock";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Engine engine;
    /** The engines whose series /metrics serves, rank 0 first. */
    private final java.util.List<Engine> ranks;
    private final String modelId;
    private volatile boolean metricsFailing;
    /** Extra exposition lines (the LoRA gauge), or null. */
    private volatile java.util.function.Supplier<String> extraMetrics;

    /** Appends {@code lines} to every {@code /metrics} answer (e.g. {@code vllm:lora_requests_info}). */
    public void addMetrics(java.util.function.Supplier<String> lines) {
        extraMetrics = requireNonNull(lines, "lines");
    }

    public VllmApi(Engine engine, String modelId) {
        this.engine = requireNonNull(engine, "engine");
        this.ranks = engine instanceof io.kvroute.mock.engine.DataParallelEngine dp ? dp.ranks() : java.util.List.of(engine);
        this.modelId = requireNonNull(modelId, "modelId");
    }

    /** A drill: {@code /metrics} answers 503 (a scrape target that is up but serves no readings). */
    public void failMetrics(boolean failing) {
        metricsFailing = failing;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        boolean get = "GET".equals(request.getMethod());
        switch (path) {
            case "/server_info", "/get_server_info" -> {
                write(response, callback, 404, "application/json", "{\"detail\":\"Not Found\"}");
                return true;
            }
            case "/metrics" -> {
                if (!get) {
                    return false;
                }
                if (metricsFailing) {
                    write(response, callback, 503, "text/plain; charset=utf-8", "metrics unavailable\n");
                    return true;
                }
                write(response, callback, 200, "text/plain; version=0.0.4; charset=utf-8", metrics());
                return true;
            }
            case "/v1/models" -> {
                if (!get) {
                    return false;
                }
                write(response, callback, 200, "application/json", modelCards().toString());
                return true;
            }
            case "/version" -> {
                if (!get) {
                    return false;
                }
                write(response, callback, 200, "application/json", "{\"version\":\"" + VERSION + "\"}");
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    /** The {@code /v1/models} list: the base model's card; an adapter feature appends cards with {@code parent}. */
    public ObjectNode modelCards() {
        ObjectNode list = JSON.createObjectNode();
        list.put("object", "list");
        ObjectNode card = list.putArray("data").addObject();
        card.put("id", modelId);
        card.put("object", "model");
        card.put("created", 0);
        card.put("owned_by", "vllm");
        card.put("root", modelId);
        card.putNull("parent");
        EngineInfo info = engine.info();
        card.put("max_model_len", info.maxTotalNumTokens());
        return list;
    }

    /** vLLM's exposition for this engine's counters: each family once, one series per rank. */
    public String metrics() {
        int n = ranks.size();
        String[] labels = new String[n];
        double[] running = new double[n];
        double[] waiting = new double[n];
        double[] usage = new double[n];
        String[] cacheInfo = new String[n];
        for (int r = 0; r < n; r++) {
            EngineStats stats = ranks.get(r).stats();
            EngineInfo info = ranks.get(r).info();
            labels[r] = "{engine=\"" + r + "\",model_name=\"" + escape(modelId) + "\"}";
            running[r] = stats.numRunningReqs();
            waiting[r] = stats.numWaitingReqs();
            usage[r] = info.maxTotalNumTokens() <= 0 ? 0
                    : Math.min(1.0, (double) stats.numUsedTokens() / info.maxTotalNumTokens());
            long blocks = info.pageSize() <= 0 ? 0 : info.maxTotalNumTokens() / info.pageSize();
            cacheInfo[r] = "{block_size=\"" + info.pageSize() + "\",enable_prefix_caching=\"True\",engine=\"" + r + "\""
                    + ",num_gpu_blocks=\"" + blocks + "\",prefix_caching_hash_algo=\"sha256\"}";
        }
        StringBuilder out = new StringBuilder(1024 * n);
        gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", labels, running);
        gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels, waiting);
        gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels, usage);
        double[] ones = new double[n];
        java.util.Arrays.fill(ones, 1);
        gauge(out, "vllm:cache_config_info", "Information of the LLMEngine CacheConfig", cacheInfo, ones);
        java.util.function.Supplier<String> extra = extraMetrics;
        if (extra != null) {
            out.append(extra.get());
        }
        return out.toString();
    }

    private static void gauge(StringBuilder out, String name, String help, String[] labels, double[] values) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        for (int i = 0; i < labels.length; i++) {
            out.append(name).append(labels[i]).append(' ').append(goFloat(values[i])).append('\n');
        }
    }

    /** {@code prometheus_client}'s float rendering: {@code 3.0}, {@code 0.25}. */
    private static String goFloat(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.format(Locale.ROOT, "%.1f", v) : Double.toString(v);
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static void write(Response response, Callback callback, int status, String contentType, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
