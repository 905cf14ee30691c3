package io.kvroute.demo;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.TreeMap;

/** The router-side counters the demo summary shows, read from the in-process meter registry. */
record RouterCounters(Map<String, Long> forwardingOutcomes, Map<String, Long> decisions,
        Map<String, Long> pressureSources, long continuations, Map<String, Long> tokenizerCacheTokens,
        Map<String, Long> cacheIndex, Map<String, Long> loraDecisions) {

    static final RouterCounters EMPTY = new RouterCounters(Map.of(), Map.of(), Map.of(), 0, Map.of(), Map.of(), Map.of());

    static RouterCounters read(MeterRegistry registry) {
        Map<String, Long> outcomes = new TreeMap<>();
        for (Counter counter : registry.find("kvroute.input.ids.forwarding").counters()) {
            outcomes.merge(counter.getId().getTag("outcome"), (long) counter.count(), Long::sum);
        }
        Map<String, Long> decisions = new TreeMap<>();
        for (Counter counter : registry.find("kvroute.policy.decisions").counters()) {
            decisions.merge(counter.getId().getTag("policy") + "/" + counter.getId().getTag("reason"),
                    (long) counter.count(), Long::sum);
        }
        Map<String, Long> sources = new TreeMap<>();
        for (Counter counter : registry.find("kvroute.pressure.source").counters()) {
            sources.merge(counter.getId().getTag("policy") + "/" + counter.getId().getTag("source"),
                    (long) counter.count(), Long::sum);
        }
        long continuations = 0;
        for (Counter counter : registry.find("kvroute.pd.continuations").counters()) {
            continuations += (long) counter.count();
        }
        Map<String, Long> cacheTokens = new TreeMap<>();
        for (FunctionCounter counter : registry.find("kvroute.tokenizer.cache.tokens").functionCounters()) {
            cacheTokens.merge(counter.getId().getTag("result"), (long) counter.count(), Long::sum);
        }
        Map<String, Long> cacheIndex = new TreeMap<>();
        for (Counter counter : registry.find("kvroute.cache.aware.decisions").counters()) {
            cacheIndex.merge(counter.getId().getTag("index"), (long) counter.count(), Long::sum);
        }
        Map<String, Long> lora = new TreeMap<>();
        for (Counter counter : registry.find("kvroute.lora.decisions").counters()) {
            if (counter.count() > 0) {
                lora.merge(counter.getId().getTag("outcome"), (long) counter.count(), Long::sum);
            }
        }
        return new RouterCounters(outcomes, decisions, sources, continuations, cacheTokens, cacheIndex, lora);
    }

    long forwarded() {
        return forwardingOutcomes.getOrDefault("forwarded", 0L);
    }

    /** Share of chat token ids the router took from its chat prefix cache instead of the tokenizer. */
    double tokenizerCacheHitRate() {
        long hit = tokenizerCacheTokens.getOrDefault("hit", 0L);
        long all = hit + tokenizerCacheTokens.getOrDefault("miss", 0L);
        return all == 0 ? 0 : (double) hit / all;
    }

    /** Chats tokenized at ingress: one outcome each ({@code engine_unsupported} is counted per attempt on top). */
    long tokenized() {
        return forwardingOutcomes.entrySet().stream().filter(e -> !e.getKey().equals("engine_unsupported"))
                .mapToLong(Map.Entry::getValue).sum();
    }

    /** Attempts that sent a vLLM worker the client's body without the router's ids. */
    long engineUnsupported() {
        return forwardingOutcomes.getOrDefault("engine_unsupported", 0L);
    }
}
