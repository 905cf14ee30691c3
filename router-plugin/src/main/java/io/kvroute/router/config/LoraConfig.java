package io.kvroute.router.config;

import java.util.Map;

/**
 * LoRA adapter routing ({@code --lora-*}; docs/lora.md), one immutable value that validates itself,
 * handed to the adapter placement and loading.
 */
public record LoraConfig(
        @Setting(name = "lora-affinity-weight", defaultValue = "8", min = 0, max = MAX_AFFINITY_WEIGHT,
                description = "What a LoRA adapter's residency on a worker is worth, in queued requests, when a request "
                        + "for it has no prefix holder: the worker with the least load + weight * (1 - affinity) wins "
                        + "(affinity 1 running, 0.8 free slot, 0.6 waiting, 0 otherwise); 0 = adapter-blind")
        double affinityWeight,
        @Setting(name = "lora-dynamic-loading", defaultValue = "false",
                description = "When no candidate lists a requested adapter of the --lora-adapter catalogue, load it onto "
                        + "the chosen worker (vLLM POST /v1/load_lora_adapter, SGLang /load_lora_adapter) before forwarding")
        boolean dynamicLoading,
        @Setting(name = "lora-adapter", defaultValue = "",
                description = "The adapter catalogue for dynamic loading: NAME=PATH (the engine's lora_path), comma separated")
        Map<String, String> catalogue,
        @Setting(name = "lora-load-timeout-ms", defaultValue = "30000", min = 1, max = 3_600_000,
                description = "How long one adapter load request may take")
        long loadTimeoutMs,
        @Setting(name = "lora-models-refresh-secs", defaultValue = "30", min = 0, max = MAX_MODELS_REFRESH_SECS,
                description = "How often the model list (/v1/models) of a healthy worker not known to serve adapters is "
                        + "read again, so an adapter loaded onto it out of band is seen (workers known to serve adapters "
                        + "are read on every health probe); 0 = never")
        double modelsRefreshSecs) {

    /** Largest affinity weight accepted: far beyond any queue a worker holds. */
    public static final double MAX_AFFINITY_WEIGHT = 1_000_000;
    /** Largest catalogue accepted (a bound on configuration, not on engines). */
    public static final int MAX_CATALOGUE = 100_000;
    /** Longest model-list refresh interval accepted: a day. */
    public static final double MAX_MODELS_REFRESH_SECS = 86_400;

    public LoraConfig {
        catalogue = Map.copyOf(catalogue);
        if (catalogue.size() > MAX_CATALOGUE) {
            throw new ConfigException("--lora-adapter: at most " + MAX_CATALOGUE + " adapters (got " + catalogue.size() + ")");
        }
        if (dynamicLoading && catalogue.isEmpty()) {
            throw new ConfigException("--lora-dynamic-loading needs at least one --lora-adapter NAME=PATH");
        }
    }

    /** {@link #modelsRefreshSecs} in nanoseconds (0 = never). */
    public long modelsRefreshNanos() {
        return (long) (modelsRefreshSecs * 1e9);
    }

    public static final LoraConfig DEFAULTS = SettingsBinder.defaults(LoraConfig.class);
}
