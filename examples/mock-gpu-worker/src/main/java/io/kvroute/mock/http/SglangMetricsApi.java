package io.kvroute.mock.http;

import static java.util.Objects.requireNonNull;

import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.engine.EngineInfo;
import io.kvroute.mock.engine.EngineStats;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * SGLang's {@code GET /metrics} for the SGLang surface ({@code --enable-metrics}, as SGLang serves it only with
 * that flag), answered ahead of {@link MockWorkerHandler}. The gauges of SGLang's scheduler collector (SGLang
 * {@code python/sglang/srt/observability/metrics_collector.py}, {@code SchedulerMetricsCollector}):
 * {@code sglang:num_running_reqs}, {@code sglang:num_queue_reqs}, {@code sglang:token_usage} (a fraction) and
 * {@code sglang:max_total_num_tokens}, labelled with the collector's labels {@code engine_type},
 * {@code model_name}, {@code moe_ep_rank}, {@code pp_rank}, {@code tp_rank} (sorted; one rank, no
 * {@code dp_rank}). With adapters ({@code --max-loras}, SGLang's {@code --enable-lora}) the LoRA pool gauges
 * follow, with the same labels ({@link #addMetrics}). Stateless apart from the engine it reads; thread-safe.
 */
public final class SglangMetricsApi extends Handler.Abstract {

    private final Engine engine;
    private final String labels;
    /** Extra families given the label set (the LoRA pool gauges), or null. */
    private volatile Function<String, String> extraMetrics;

    public SglangMetricsApi(Engine engine, String modelId) {
        this.engine = requireNonNull(engine, "engine");
        this.labels = "{engine_type=\"unified\",model_name=\"" + escape(requireNonNull(modelId, "modelId"))
                + "\",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"}";
    }

    /** Appends the families {@code lines} renders for this worker's label set to every answer. */
    public void addMetrics(Function<String, String> lines) {
        extraMetrics = requireNonNull(lines, "lines");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        if (!"/metrics".equals(Request.getPathInContext(request)) || !"GET".equals(request.getMethod())) {
            return false;
        }
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
        response.write(true, ByteBuffer.wrap(metrics().getBytes(StandardCharsets.UTF_8)), callback);
        return true;
    }

    /** The exposition: each family once, one series. */
    public String metrics() {
        EngineStats stats = engine.stats();
        EngineInfo info = engine.info();
        double usage = info.maxTotalNumTokens() <= 0 ? 0
                : Math.min(1.0, (double) stats.numUsedTokens() / info.maxTotalNumTokens());
        StringBuilder out = new StringBuilder(1024);
        gauge(out, "sglang:num_running_reqs", "The number of running requests.", labels, stats.numRunningReqs());
        gauge(out, "sglang:num_queue_reqs", "The number of requests in the waiting queue.", labels, stats.numWaitingReqs());
        gauge(out, "sglang:token_usage", "The token usage.", labels, usage);
        gauge(out, "sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", labels,
                info.maxTotalNumTokens());
        Function<String, String> extra = extraMetrics;
        if (extra != null) {
            out.append(extra.apply(labels));
        }
        return out.toString();
    }

    /** One gauge family with one series, in {@code prometheus_client}'s rendering. */
    public static void gauge(StringBuilder out, String name, String help, String labels, double value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(labels).append(' ').append(value == Math.rint(value) && Math.abs(value) < 1e15
                ? String.format(Locale.ROOT, "%.1f", value) : Double.toString(value)).append('\n');
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
