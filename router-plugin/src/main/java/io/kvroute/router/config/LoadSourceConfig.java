package io.kvroute.router.config;

/**
 * Where engine load comes from and how {@code /metrics} is scraped, grouped so the flags travel as one value.
 *
 * @param loadSource {@code auto} (LoadStat when the worker advertises a load endpoint, else its
 *     {@code /metrics}), {@code loadstat}, {@code metrics} or {@code none} ({@code --load-source})
 * @param engineType {@code auto} (discovered: {@code /server_info} means SGLang, none means vLLM),
 *     {@code sglang}, {@code vllm} or {@code trtllm} ({@code --engine-type})
 * @param scrapeIntervalMs time between two scrapes of one worker ({@code --metrics-scrape-interval-ms})
 * @param scrapeTimeoutMs per-scrape timeout ({@code --metrics-scrape-timeout-ms})
 * @param stalenessMs a scraped reading older than this counts as saturated ({@code --metrics-staleness-ms})
 * @param waitingName queued-requests gauge overriding the engine's default, or null ({@code --metrics-waiting-name})
 * @param runningName running-requests gauge overriding the default, or null ({@code --metrics-running-name})
 * @param kvUsageName KV-usage gauge (fraction) overriding the default, or null ({@code --metrics-kv-usage-name})
 */
public record LoadSourceConfig(String loadSource, String engineType, long scrapeIntervalMs, long scrapeTimeoutMs,
                               long stalenessMs, String waitingName, String runningName, String kvUsageName) {

    /** Longest wait between scrapes of a failing worker. */
    public static final long MAX_SCRAPE_BACKOFF_MS = 5_000;

    public static final LoadSourceConfig DEFAULTS = new LoadSourceConfig("auto", "auto", 200, 500, 1000, null, null, null);
}
