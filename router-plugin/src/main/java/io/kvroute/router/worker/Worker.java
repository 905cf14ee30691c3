package io.kvroute.router.worker;

import java.util.List;
import java.util.Objects;

/**
 * One GPU worker as the router knows it. Immutable: a change (a learned model id, a learned load
 * endpoint) produces a new instance published through {@link WorkerRegistry}.
 *
 * @param id stable identifier; the normalized base URL unless configured otherwise
 * @param url base URL without trailing slash, e.g. {@code http://127.0.0.1:30001}
 * @param role regular, prefill or decode
 * @param modelId the served model, or null while unknown (serves any model)
 * @param bootstrapPort the prefill worker's KV bootstrap port, or null
 * @param loadEndpoints ZeroMQ endpoints publishing this worker's load reports, one per dp rank
 */
public record Worker(
        String id, String url, WorkerRole role, String modelId, Integer bootstrapPort, List<String> loadEndpoints) {

    public Worker {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(role, "role");
        loadEndpoints = loadEndpoints == null ? List.of() : List.copyOf(loadEndpoints);
    }

    public static Worker regular(String url) {
        String normalized = normalizeUrl(url);
        return new Worker(normalized, normalized, WorkerRole.REGULAR, null, null, List.of());
    }

    public Worker withModelId(String newModelId) {
        return new Worker(id, url, role, newModelId, bootstrapPort, loadEndpoints);
    }

    public Worker withLoadEndpoints(List<String> endpoints) {
        return new Worker(id, url, role, modelId, bootstrapPort, endpoints);
    }

    public Worker withRole(WorkerRole newRole, Integer newBootstrapPort) {
        return new Worker(id, url, newRole, modelId, newBootstrapPort, loadEndpoints);
    }

    /** True when this worker can serve {@code requestedModel} (null = any). */
    public boolean serves(String requestedModel) {
        return requestedModel == null || modelId == null || modelId.equals(requestedModel);
    }

    /** Strips trailing slashes; the URL must already be validated. */
    public static String normalizeUrl(String url) {
        String trimmed = url.trim();
        while (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed;
    }
}
