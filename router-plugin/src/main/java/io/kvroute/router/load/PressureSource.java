package io.kvroute.router.load;

/** Which data a pressure comparison used; the label is {@code prefill_pressure_source} (as SGLang's
 * {@code experimental/sgl-router/src/policies/admission.rs} labels it). */
public enum PressureSource {
    ESTIMATED_PREFILL_QUEUE_MS("estimated_prefill_queue_ms"),
    NATIVE_QUEUE_TOKENS("native_queue_tokens"),
    ROUTER_LOCAL("router_local");

    private final String label;

    PressureSource(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
