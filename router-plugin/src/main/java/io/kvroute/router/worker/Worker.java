package io.kvroute.router.worker;

import java.net.URI;
import java.util.List;
import java.util.Objects;

/**
 * One GPU worker as the router knows it. Immutable: a change (a learned model id, a learned load
 * endpoint) produces a new instance published through {@link WorkerRegistry}.
 *
 * @param id short stable identifier derived from the URL ({@link #idFor}), safe in URL paths and
 *     identical on every router replica
 * @param url base URL without trailing slash, e.g. {@code http://127.0.0.1:30001}
 * @param role regular, prefill or decode
 * @param modelId the served model, or null while unknown (serves any model)
 * @param bootstrapPort the prefill worker's KV bootstrap port, or null
 * @param loadEndpoints ZeroMQ endpoints publishing this worker's load reports, one per dp rank
 * @param kvEvents its KV-event endpoints: the {@code kv_events} block of its {@code /server_info}, else
 *     an operator's template (flag, admin API or pod annotation), or null when it has neither
 * @param engine the serving engine as discovered or configured, or null while unknown
 * @param kvEventsFromServerInfo {@code kvEvents} came from the engine's {@code /server_info}, which
 *     wins over any template: a changed template (a pod's annotation edited) leaves it alone
 * @param modelAliases the other names the same model is served under (vLLM {@code --served-model-name a b}
 *     lists one base card per name; {@code modelId} is the first), empty when it has one name
 */
public record Worker(String id, String url, WorkerRole role, String modelId, Integer bootstrapPort,
                     List<String> loadEndpoints, KvEventsAdvert kvEvents, EngineType engine,
                     boolean kvEventsFromServerInfo, List<String> modelAliases) {

    public Worker {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(role, "role");
        loadEndpoints = loadEndpoints == null ? List.of() : List.copyOf(loadEndpoints);
        modelAliases = modelAliases == null ? List.of() : List.copyOf(modelAliases);
    }

    public Worker(String id, String url, WorkerRole role, String modelId, Integer bootstrapPort,
            List<String> loadEndpoints, KvEventsAdvert kvEvents, EngineType engine, boolean kvEventsFromServerInfo) {
        this(id, url, role, modelId, bootstrapPort, loadEndpoints, kvEvents, engine, kvEventsFromServerInfo, List.of());
    }

    public Worker(String id, String url, WorkerRole role, String modelId, Integer bootstrapPort, List<String> loadEndpoints) {
        this(id, url, role, modelId, bootstrapPort, loadEndpoints, null, null, false);
    }

    public Worker(String id, String url, WorkerRole role, String modelId, Integer bootstrapPort, List<String> loadEndpoints,
            KvEventsAdvert kvEvents) {
        this(id, url, role, modelId, bootstrapPort, loadEndpoints, kvEvents, null, false);
    }

    public Worker(String id, String url, WorkerRole role, String modelId, Integer bootstrapPort, List<String> loadEndpoints,
            KvEventsAdvert kvEvents, EngineType engine) {
        this(id, url, role, modelId, bootstrapPort, loadEndpoints, kvEvents, engine, false);
    }

    public static Worker regular(String url) {
        return of(url, WorkerRole.REGULAR, null);
    }

    /** A worker with a derived id and no learned facts yet. */
    public static Worker of(String url, WorkerRole role, Integer bootstrapPort) {
        String normalized = normalizeUrl(url);
        return new Worker(idFor(normalized), normalized, role, null, bootstrapPort, List.of());
    }

    /** {@code w-} plus the first 12 hex digits of SHA-256 over the normalized URL. */
    public static String idFor(String url) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(normalizeUrl(url).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "w-" + java.util.HexFormat.of().formatHex(digest, 0, 6);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    public Worker withModelId(String newModelId) {
        return new Worker(id, url, role, newModelId, bootstrapPort, loadEndpoints, kvEvents, engine,
                kvEventsFromServerInfo, modelAliases);
    }

    /** This worker serving {@code newModelId} under {@code aliases} too (other names of the same model). */
    public Worker withModelNames(String newModelId, List<String> aliases) {
        return new Worker(id, url, role, newModelId, bootstrapPort, loadEndpoints, kvEvents, engine,
                kvEventsFromServerInfo, aliases);
    }

    public Worker withLoadEndpoints(List<String> endpoints) {
        return new Worker(id, url, role, modelId, bootstrapPort, endpoints, kvEvents, engine,
                kvEventsFromServerInfo, modelAliases);
    }

    /** This worker with an operator's template's endpoints ({@code advert}; null = none). */
    public Worker withKvEvents(KvEventsAdvert advert) {
        return new Worker(id, url, role, modelId, bootstrapPort, loadEndpoints, advert, engine,
                false, modelAliases);
    }

    /**
     * This worker with a changed template's endpoints, unless its {@code /server_info} advertised its
     * own (which wins over any template): then unchanged.
     */
    public Worker withTemplateKvEvents(KvEventsAdvert advert) {
        return kvEventsFromServerInfo ? this : withKvEvents(advert);
    }

    /** This worker with the {@code kv_events} block of its {@code /server_info} (load endpoints derived by the caller). */
    public Worker withServerInfoKvEvents(KvEventsAdvert advert) {
        return new Worker(id, url, role, modelId, bootstrapPort, loadEndpoints, advert, engine,
                true, modelAliases);
    }

    /** This worker with its engine type learned or configured. */
    public Worker withEngine(EngineType newEngine) {
        return new Worker(id, url, role, modelId, bootstrapPort, loadEndpoints, kvEvents, newEngine,
                kvEventsFromServerInfo, modelAliases);
    }

    /** The host of {@link #url()}, for wildcard endpoint hosts. */
    public String host() {
        return URI.create(url).getHost();
    }

    public Worker withRole(WorkerRole newRole, Integer newBootstrapPort) {
        return new Worker(id, url, newRole, modelId, newBootstrapPort, loadEndpoints, kvEvents, engine,
                kvEventsFromServerInfo, modelAliases);
    }

    /** True when this worker can serve {@code requestedModel} (null = any), under any of its names. */
    public boolean serves(String requestedModel) {
        return requestedModel == null || modelId == null || modelId.equals(requestedModel)
                || modelAliases.contains(requestedModel);
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
