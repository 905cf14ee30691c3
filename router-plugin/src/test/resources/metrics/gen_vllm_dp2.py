#!/usr/bin/env python3
"""Writes vllm-dp2.prom: a vLLM /metrics exposition of one API server over two data-parallel engines,
rendered by the real Prometheus Python client (the library vLLM serves /metrics with), not written by hand.

The families are those vLLM's PrometheusStatLogger registers (vllm/v1/metrics/loggers.py, read at
vllm-project/vllm 005a810bc40f): the same names, help texts, types, label names (["model_name",
"engine"]), histogram buckets and registration order, with per-engine children as its make_per_engine
creates them, and vllm:cache_config_info as its log_metrics_info writes it (a gauge set to 1, labelled
with CacheConfig.metrics_info() plus "engine"). The client, not this script, decides the rendering:
label order, float format, escaping, the `_total` and `_created` names.
Only the families up to the first histograms of each kind are declared; the rest of a real scrape is
more histogram families of the same shape. Like vLLM's default registry, the GC and platform collectors
come first, and counters and histograms carry their `_created` series (prometheus_client's default).

Environment: pip install prometheus_client==0.26.0 (the local wheel index has it).
Usage, from the repository root:
    python3 router-plugin/src/test/resources/metrics/gen_vllm_dp2.py > router-plugin/src/test/resources/metrics/vllm-dp2.prom
The values are fixed below; the GC, platform and `_created` values are whatever the generating process had.
"""
import sys

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

MODEL = "qwen3-served"
ENGINES = [0, 1]
LABELS = ["model_name", "engine"]
MAX_MODEL_LEN = 40960

registry = CollectorRegistry()
prometheus_client.GCCollector(registry=registry)
prometheus_client.PlatformCollector(registry=registry)


def per_engine(metric):
    return {e: metric.labels(MODEL, str(e)) for e in ENGINES}


def build_1_2_5_buckets(max_value):
    buckets, exponent = [], 0
    while True:
        for m in (1, 2, 5):
            value = m * 10 ** exponent
            if value > max_value:
                return buckets
            buckets.append(value)
        exponent += 1


running = per_engine(Gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
                           LABELS, registry=registry))
waiting = per_engine(Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
                           LABELS, registry=registry))
gpu_cache = per_engine(Gauge("vllm:gpu_cache_usage_perc",
                             "GPU KV-cache usage. 1 means 100 percent usage."
                             "DEPRECATED: Use vllm:kv_cache_usage_perc instead.", LABELS, registry=registry))
gpu_queries = per_engine(Counter("vllm:gpu_prefix_cache_queries",
                                 "GPU prefix cache queries, in terms of number of queried"
                                 "tokens. DEPRECATED: Use vllm:prefix_cache_queries instead.", LABELS,
                                 registry=registry))
gpu_hits = per_engine(Counter("vllm:gpu_prefix_cache_hits",
                              "GPU prefix cache hits, in terms of number of cached "
                              "tokens. DEPRECATED: Use vllm:prefix_cache_hits instead.", LABELS, registry=registry))
kv_usage = per_engine(Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", LABELS,
                            registry=registry))
queries = per_engine(Counter("vllm:prefix_cache_queries",
                             "Prefix cache queries, in terms of number of queried tokens.", LABELS, registry=registry))
hits = per_engine(Counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                          LABELS, registry=registry))
preemptions = per_engine(Counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
                                 LABELS, registry=registry))
prompt_tokens = per_engine(Counter("vllm:prompt_tokens", "Number of prefill tokens processed.", LABELS,
                                   registry=registry))
generation_tokens = per_engine(Counter("vllm:generation_tokens", "Number of generation tokens processed.", LABELS,
                                       registry=registry))
success = Counter("vllm:request_success", "Count of successfully processed requests.", LABELS + ["finished_reason"],
                  registry=registry)
prompt_hist = per_engine(Histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", LABELS,
                                   buckets=build_1_2_5_buckets(MAX_MODEL_LEN), registry=registry))
ttft = per_engine(Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                            LABELS, registry=registry,
                            buckets=[0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                                     7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]))

# Scheduler state: engine 0 busy, engine 1 nearly idle.
for e, (r, w, kv) in {0: (7, 12, 0.8125), 1: (2, 0, 0.0625)}.items():
    running[e].set(r)
    waiting[e].set(w)
    gpu_cache[e].set(kv)
    kv_usage[e].set(kv)
for e, (q, h) in {0: (184320, 122880), 1: (40960, 8192)}.items():
    gpu_queries[e].inc(q)
    gpu_hits[e].inc(h)
    queries[e].inc(q)
    hits[e].inc(h)
prompt_tokens[0].inc(901120)
generation_tokens[0].inc(80640)
prompt_tokens[1].inc(243712)
generation_tokens[1].inc(24832)
for e, reason, n in [(0, "stop", 311), (0, "length", 4), (1, "stop", 97)]:
    success.labels(MODEL, str(e), reason).inc(n)
for e, values in {0: [0.05, 0.2, 0.9, 3.1], 1: [0.03, 0.08]}.items():
    for v in values:
        ttft[e].observe(v)
        prompt_hist[e].observe(int(v * 4000))

# log_metrics_info("cache_config", ...): labels are CacheConfig.metrics_info() keys, then "engine".
cache_info = {"block_size": "16", "gpu_memory_utilization": "0.9", "swap_space": "4", "cache_dtype": "auto",
              "is_attention_free": "False", "num_gpu_blocks_override": "None", "sliding_window": "None",
              "enable_prefix_caching": "True", "prefix_caching_hash_algo": "sha256", "cpu_offload_gb": "0",
              "calculate_kv_scales": "False", "num_gpu_blocks": "2048", "num_cpu_blocks": "None", "engine": ""}
info = Gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", list(cache_info.keys()),
             registry=registry)
for e in ENGINES:
    info.labels(**{**cache_info, "engine": str(e)}).set(1)

sys.stdout.write(generate_latest(registry).decode("utf-8"))
