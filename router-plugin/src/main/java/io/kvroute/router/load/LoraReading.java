package io.kvroute.router.load;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One worker's LoRA state as its {@code /metrics} tells it, read in the same scrape as its load.
 *
 * <p><b>vLLM</b> ({@code --enable-lora}) exposes the info gauge {@code vllm:lora_requests_info} with the
 * labels {@code running_lora_adapters} and {@code waiting_lora_adapters} (comma-joined adapter names of the
 * running and waiting requests) and {@code max_lora}; its value is the wall-clock time of the update and a
 * new series appears per label combination while old ones stay, so the series with the largest value is
 * the current one (vLLM {@code vllm/v1/metrics/loggers.py}; llm-d reads it the same way,
 * {@code pkg/epp/framework/plugins/datalayer/extractor/metrics/loraspec.go}). vLLM emits it only once an
 * adapter has been used: a missing family is "unknown", not "no adapters".
 *
 * <p><b>SGLang</b> ({@code --enable-metrics}) has no adapter names, only the slot counts
 * {@code sglang:lora_pool_slots_used} and {@code sglang:lora_pool_slots_total} (SGLang
 * {@code python/sglang/srt/observability/metrics_collector.py}).
 *
 * @param running adapters with running requests (vLLM), in exposition order; empty when unknown
 * @param waiting adapters with waiting requests (vLLM)
 * @param maxLoras adapter slots of the engine ({@code max_lora}, or SGLang's slot total), 0 when unknown
 * @param slotsUsed slots in use (SGLang), -1 when unknown
 */
public record LoraReading(Set<String> running, Set<String> waiting, int maxLoras, int slotsUsed) {
    public static final String VLLM_INFO = "vllm:lora_requests_info";
    public static final String SGLANG_SLOTS_USED = "sglang:lora_pool_slots_used";
    public static final String SGLANG_SLOTS_TOTAL = "sglang:lora_pool_slots_total";
    /** The metric families this reading is made of (added to a scrape's wanted set). */
    static final Set<String> FAMILIES = Set.of(VLLM_INFO, SGLANG_SLOTS_USED, SGLANG_SLOTS_TOTAL);
    /** Largest number of adapter names kept per list: a bound on what one exposition can make the router hold. */
    static final int MAX_NAMES = 1024;
    /** Largest slot count believed (vLLM's max_loras is a small integer). */
    static final int MAX_SLOTS = 1 << 16;

    public LoraReading {
        running = Set.copyOf(running);
        waiting = Set.copyOf(waiting);
    }

    /** The LoRA families of one parsed scrape, or null when it has none (the engine serves no adapters, or none used yet). */
    static LoraReading of(Map<String, List<PrometheusTextParser.Sample>> samples) {
        List<PrometheusTextParser.Sample> info = samples.get(VLLM_INFO);
        List<PrometheusTextParser.Sample> used = samples.get(SGLANG_SLOTS_USED);
        List<PrometheusTextParser.Sample> total = samples.get(SGLANG_SLOTS_TOTAL);
        if ((info == null || info.isEmpty()) && (total == null || total.isEmpty())) {
            return null;
        }
        Set<String> running = Set.of();
        Set<String> waiting = Set.of();
        int maxLoras = 0;
        int slotsUsed = -1;
        if (info != null && !info.isEmpty()) {
            PrometheusTextParser.Sample latest = info.get(0);
            for (PrometheusTextParser.Sample s : info) {
                if (s.value() > latest.value()) {
                    latest = s;
                }
            }
            running = names(latest.labels().get("running_lora_adapters"));
            waiting = names(latest.labels().get("waiting_lora_adapters"));
            maxLoras = count(latest.labels().get("max_lora"));
        }
        if (total != null && !total.isEmpty()) {
            maxLoras = Math.max(maxLoras, max(total));
            slotsUsed = used == null || used.isEmpty() ? -1 : max(used);
        }
        return new LoraReading(running, waiting, maxLoras, slotsUsed);
    }

    /** Comma-joined names, trimmed, empty parts dropped, at most {@link #MAX_NAMES}. */
    static Set<String> names(String joined) {
        if (joined == null || joined.isBlank()) {
            return Set.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (String part : joined.split(",")) {
            String name = part.trim();
            if (!name.isEmpty() && out.size() < MAX_NAMES) {
                out.add(name);
            }
        }
        return out;
    }

    private static int count(String text) {
        if (text == null) {
            return 0;
        }
        try {
            long v = Long.parseLong(text.trim());
            return v <= 0 ? 0 : (int) Math.min(MAX_SLOTS, v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * The largest series of a family: SGLang repeats one pool's count on every tensor-parallel rank's series,
     * so a sum would count it once per rank. NaN, negative and infinite values count as 0.
     */
    private static int max(List<PrometheusTextParser.Sample> series) {
        double best = 0;
        for (PrometheusTextParser.Sample s : series) {
            double v = s.value();
            if (v > best && !Double.isInfinite(v)) {
                best = v;
            }
        }
        return (int) Math.min(MAX_SLOTS, Math.round(best));
    }
}
