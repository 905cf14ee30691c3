package io.kvroute.router.config;

/**
 * Where engine load comes from and how long it stays true: LoadStat pushed by the engine, or the
 * engine's Prometheus {@code /metrics} scraped by the router, and the per-engine gauge names. Handed
 * to the load plane and the {@code /metrics} scraper.
 */
public record LoadSourceConfig(
        @Setting(name = "load-source", defaultValue = "auto", choices = {"auto", "loadstat", "metrics", "none"},
                description = "Where engine load comes from: auto (LoadStat when the worker advertises a load endpoint, else "
                        + "its Prometheus /metrics), loadstat, metrics or none")
        String loadSource,
        @Setting(name = "engine-type", defaultValue = "auto", choices = {"auto", "sglang", "vllm", "trtllm"},
                description = "The workers' engine: auto (a worker with /server_info is SGLang, one without is vLLM), "
                        + "sglang, vllm or trtllm; picks the /metrics names and whether input_ids may go to chat")
        String engineType,
        @Setting(name = "metrics-scrape-interval-ms", defaultValue = "200", min = 10, max = MAX_SCRAPE_BACKOFF_MS,
                description = "Time between two /metrics scrapes of one worker")
        long scrapeIntervalMs,
        @Setting(name = "metrics-scrape-timeout-ms", defaultValue = "500", min = 1, max = 60_000,
                description = "Timeout of one /metrics scrape; failures back off, doubling up to 5 s")
        long scrapeTimeoutMs,
        @Setting(name = "metrics-staleness-ms", defaultValue = "1000", max = 3_600_000,
                description = "A /metrics reading older than this counts as saturated for the queue gate and the "
                        + "saturation tiers; must exceed the interval")
        long stalenessMs,
        @Setting(name = "metrics-waiting-name", defaultValue = Setting.UNSET,
                description = "Queued-requests gauge read from /metrics instead of the engine's (vllm:num_requests_waiting, "
                        + "sglang:num_queue_reqs, trtllm_num_requests_waiting), for forks.")
        String waitingName,
        @Setting(name = "metrics-running-name", defaultValue = Setting.UNSET,
                description = "Running-requests gauge read from /metrics instead of the engine's (vllm:num_requests_running, "
                        + "sglang:num_running_reqs, trtllm_num_requests_running), for forks.")
        String runningName,
        @Setting(name = "metrics-kv-usage-name", defaultValue = Setting.UNSET,
                description = "KV-usage gauge (fraction 0..1) read from /metrics instead of the engine's "
                        + "(vllm:kv_cache_usage_perc, sglang:token_usage, trtllm_kv_cache_utilization), for forks.")
        String kvUsageName,
        @Setting(name = "load-freshness-secs", defaultValue = "5", positive = true,
                description = "How long an engine load report stays fresh, judged by the router's clock")
        double freshnessSecs) {

    /** Longest wait between scrapes of a failing worker. */
    public static final long MAX_SCRAPE_BACKOFF_MS = 5_000;

    public LoadSourceConfig {
        if (stalenessMs <= scrapeIntervalMs) {
            throw ConfigValidator.fail("--metrics-staleness-ms", stalenessMs,
                    "must be above --metrics-scrape-interval-ms and at most 3600000");
        }
        waitingName = metricName("--metrics-waiting-name", waitingName);
        runningName = metricName("--metrics-running-name", runningName);
        kvUsageName = metricName("--metrics-kv-usage-name", kvUsageName);
    }

    public static final LoadSourceConfig DEFAULTS = SettingsBinder.defaults(LoadSourceConfig.class);

    public long freshnessNanos() {
        return (long) (freshnessSecs * 1e9);
    }

    private static String metricName(String flag, String name) {
        if (name == null || name.isEmpty()) {
            return null;
        }
        if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
            throw ConfigValidator.fail(flag, name, "is not a Prometheus metric name");
        }
        return name;
    }
}
