package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Which {@code /metrics} series carry one engine type's load, as llm-d's endpoint picker maps them
 * (llm-d {@code pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go}). Every name can
 * be overridden for forks that rename their metrics.
 *
 * @param waiting gauge of queued requests (vLLM counts deferred requests too)
 * @param running gauge of requests in the running batch
 * @param kvUsage gauge of KV-cache usage as a fraction 0..1
 * @param rankLabel the label that tells data-parallel ranks apart ({@code engine} for vLLM,
 *        {@code dp_rank} for SGLang), or empty when the engine exposes one series per process
 * @param cacheInfo an info gauge whose labels {@code blockSizeLabel} and {@code numBlocksLabel} give
 *        the KV capacity in tokens per rank (vLLM {@code vllm:cache_config_info}), or empty
 * @param capacityTokens a gauge of the KV capacity in tokens (SGLang {@code sglang:max_total_num_tokens}), or empty
 */
public record EngineMetricNames(String engine, String waiting, String running, String kvUsage, String rankLabel,
                                String cacheInfo, String blockSizeLabel, String numBlocksLabel, String capacityTokens) {

    public EngineMetricNames {
        requireNonNull(engine, "engine");
        requireNonNull(waiting, "waiting");
        requireNonNull(running, "running");
        requireNonNull(kvUsage, "kvUsage");
        requireNonNull(rankLabel, "rankLabel");
        requireNonNull(cacheInfo, "cacheInfo");
        requireNonNull(blockSizeLabel, "blockSizeLabel");
        requireNonNull(numBlocksLabel, "numBlocksLabel");
        requireNonNull(capacityTokens, "capacityTokens");
        if (waiting.isEmpty() || running.isEmpty()) {
            throw new IllegalArgumentException("engine " + engine + " needs waiting and running metric names");
        }
    }

    /** vLLM {@code vllm/v1/metrics/loggers.py} ({@code PrometheusStatLogger}; labels model_name, engine). */
    public static final EngineMetricNames VLLM = new EngineMetricNames("vllm", "vllm:num_requests_waiting",
            "vllm:num_requests_running", "vllm:kv_cache_usage_perc", "engine", "vllm:cache_config_info",
            "block_size", "num_gpu_blocks", "");

    /** SGLang {@code python/sglang/srt/observability/metrics_collector.py} (with {@code --enable-metrics}). */
    public static final EngineMetricNames SGLANG = new EngineMetricNames("sglang", "sglang:num_queue_reqs",
            "sglang:num_running_reqs", "sglang:token_usage", "dp_rank", "", "", "", "sglang:max_total_num_tokens");

    /** TensorRT-LLM's {@code trtllm-serve} metrics, as llm-d maps them. */
    public static final EngineMetricNames TRTLLM = new EngineMetricNames("trtllm", "trtllm_num_requests_waiting",
            "trtllm_num_requests_running", "trtllm_kv_cache_utilization", "", "", "", "", "");

    /** The defaults of an engine type ({@code vllm}, {@code sglang}, {@code trtllm}). */
    public static EngineMetricNames forEngine(String engine) {
        return switch (engine.toLowerCase(Locale.ROOT)) {
            case "vllm" -> VLLM;
            case "sglang" -> SGLANG;
            case "trtllm" -> TRTLLM;
            default -> throw new IllegalArgumentException("unknown engine type '" + engine + "' (vllm, sglang, trtllm)");
        };
    }

    /** The metric names the parser must decode. */
    Set<String> wanted() {
        Set<String> s = new LinkedHashSet<>();
        s.add(waiting);
        s.add(running);
        for (String n : new String[] {kvUsage, cacheInfo, capacityTokens}) {
            if (!n.isEmpty()) {
                s.add(n);
            }
        }
        return Set.copyOf(s);
    }

    public EngineMetricNames withWaiting(String name) {
        return new EngineMetricNames(engine, name, running, kvUsage, rankLabel, cacheInfo, blockSizeLabel,
                numBlocksLabel, capacityTokens);
    }

    public EngineMetricNames withRunning(String name) {
        return new EngineMetricNames(engine, waiting, name, kvUsage, rankLabel, cacheInfo, blockSizeLabel,
                numBlocksLabel, capacityTokens);
    }

    public EngineMetricNames withKvUsage(String name) {
        return new EngineMetricNames(engine, waiting, running, name, rankLabel, cacheInfo, blockSizeLabel,
                numBlocksLabel, capacityTokens);
    }
}
