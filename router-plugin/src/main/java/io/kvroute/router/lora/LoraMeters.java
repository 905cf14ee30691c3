package io.kvroute.router.lora;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The LoRA meters: {@code kvroute_lora_decisions_total{outcome}} (resident, loaded, waiting, miss: the chosen
 * worker's adapter state when the request was sent), {@code kvroute_lora_loads_total{outcome}} (ok, failed,
 * timeout: load requests the router sent) and {@code kvroute_lora_load_seconds} (their latency). Every series
 * is registered at zero. Thread-safe.
 */
final class LoraMeters {
    static final String[] DECISION_OUTCOMES = {"resident", "loaded", "waiting", "miss"};
    static final String[] LOAD_OUTCOMES = {"ok", "failed", "timeout"};

    private final Map<String, Counter> decisions;
    private final Map<String, Counter> loads;
    private final Timer loadLatency;

    LoraMeters(MeterRegistry registry) {
        java.util.HashMap<String, Counter> d = new java.util.HashMap<>();
        for (String o : DECISION_OUTCOMES) {
            d.put(o, Counter.builder("kvroute.lora.decisions").tag("outcome", o)
                    .description("Requests for a LoRA adapter by the chosen worker's adapter state").register(registry));
        }
        java.util.HashMap<String, Counter> l = new java.util.HashMap<>();
        for (String o : LOAD_OUTCOMES) {
            l.put(o, Counter.builder("kvroute.lora.loads").tag("outcome", o)
                    .description("Adapter load requests the router sent to workers, by outcome").register(registry));
        }
        this.decisions = Map.copyOf(d);
        this.loads = Map.copyOf(l);
        this.loadLatency = Timer.builder("kvroute.lora.load").description("Latency of adapter load requests")
                .register(registry);
    }

    void decision(String outcome) {
        decisions.get(outcome).increment();
    }

    void load(String outcome, long nanos) {
        loads.get(outcome).increment();
        loadLatency.record(nanos, TimeUnit.NANOSECONDS);
    }
}
