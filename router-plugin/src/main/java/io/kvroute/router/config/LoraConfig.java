package io.kvroute.router.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * LoRA adapter routing ({@code --lora-*}; docs/lora.md), one immutable value that validates itself.
 *
 * @param affinityWeight what an adapter's residency on a worker is worth in queued requests when a request
 *     for it has no prefix holder ({@code --lora-affinity-weight}); 0 places adapter requests as any other
 * @param dynamicLoading load an adapter of {@code catalogue} onto the chosen worker when no candidate lists it
 *     ({@code --lora-dynamic-loading})
 * @param catalogue adapter name to the path the engine loads it from ({@code --lora-adapter NAME=PATH})
 * @param loadTimeoutMs how long one load request may take ({@code --lora-load-timeout-ms})
 */
public record LoraConfig(double affinityWeight, boolean dynamicLoading, Map<String, String> catalogue, long loadTimeoutMs) {

    /** Largest affinity weight accepted: far beyond any queue a worker holds. */
    public static final double MAX_AFFINITY_WEIGHT = 1_000_000;
    /** Largest catalogue accepted (a bound on configuration, not on engines). */
    public static final int MAX_CATALOGUE = 100_000;

    public static final LoraConfig DEFAULTS = new LoraConfig(8, false, Map.of(), 30_000);

    public LoraConfig {
        if (!(affinityWeight >= 0 && affinityWeight <= MAX_AFFINITY_WEIGHT)) {
            throw new ConfigException("--lora-affinity-weight must be within 0.." + (long) MAX_AFFINITY_WEIGHT
                    + " (got " + affinityWeight + ")");
        }
        if (loadTimeoutMs < 1 || loadTimeoutMs > 3_600_000) {
            throw new ConfigException("--lora-load-timeout-ms must be within 1..3600000 (got " + loadTimeoutMs + ")");
        }
        catalogue = Map.copyOf(catalogue);
        if (catalogue.size() > MAX_CATALOGUE) {
            throw new ConfigException("--lora-adapter: at most " + MAX_CATALOGUE + " adapters (got " + catalogue.size() + ")");
        }
        if (dynamicLoading && catalogue.isEmpty()) {
            throw new ConfigException("--lora-dynamic-loading needs at least one --lora-adapter NAME=PATH");
        }
    }

    /** {@code NAME=PATH} entries; a repeated name, an empty name or path is an error naming the entry. */
    public static Map<String, String> parseCatalogue(List<String> entries) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String entry : entries == null ? List.<String>of() : entries) {
            int eq = entry.indexOf('=');
            String name = eq < 0 ? "" : entry.substring(0, eq).trim();
            String path = eq < 0 ? "" : entry.substring(eq + 1).trim();
            if (name.isEmpty() || path.isEmpty()) {
                throw new ConfigException("--lora-adapter '" + entry + "' is not NAME=PATH");
            }
            if (out.put(name, path) != null) {
                throw new ConfigException("--lora-adapter names '" + name + "' twice");
            }
        }
        return out;
    }
}
