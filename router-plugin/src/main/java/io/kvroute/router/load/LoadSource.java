package io.kvroute.router.load;

/**
 * Where a worker's engine load comes from; the label shows in {@code GET /v1/loads} ({@code load_source})
 * and tags {@code kvroute_load_workers_by_source}.
 */
public enum LoadSource {
    /** SGLang-format load reports pushed over ZeroMQ (the worker advertises a load endpoint). */
    LOADSTAT("loadstat"),
    /** The engine's Prometheus {@code /metrics}, scraped by the router (vLLM pushes nothing). */
    METRICS("metrics");

    private final String label;

    LoadSource(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
