package io.kvroute.router.worker;

import io.kvroute.router.config.HealthSettings;
import io.kvroute.router.config.SettingsBinder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.thread.Scheduler;
import org.eclipse.jetty.client.Result;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Active health checks and discovery. Every interval, each worker's {@code /health} is probed
 * asynchronously with a timeout; {@code failureThreshold} consecutive failures mark it unhealthy
 * and {@code successThreshold} consecutive successes mark it healthy again. A healthy worker whose
 * model id is still unknown is asked for {@code /server_info} (the {@code kv_events} block with its
 * load and KV-event ranges) and {@code /v1/models} (the served model), so workers may start after the
 * router. The same list names the LoRA adapters the worker serves ({@link #onModelCards}); it is read
 * again on later probes of workers known to serve adapters.
 *
 * <p><b>Served model and engine type.</b> The model id is what the engine itself serves: the first
 * {@code /v1/models} card without a {@code parent} (LoRA adapter cards name their base model there;
 * vLLM {@code vllm/entrypoints/openai/models/serving.py}, SGLang {@code http_server.py}), so an engine
 * started with {@code --served-model-name} is routed by that name, not by its {@code model_path}.
 * Without a usable {@code /v1/models} an SGLang worker falls back to {@code served_model_name},
 * {@code model_id}, then {@code model_path} of {@code /server_info}. A worker that answers
 * {@code /server_info} is SGLang; one that has none but answers {@code /v1/models} is vLLM; a
 * configured engine type overrides both. A vLLM worker's {@code GET /version} ({@code {"version": "..."}},
 * vLLM {@code vllm/entrypoints/serve/instrumentator/basic.py}) is read once on discovery for the log
 * and {@link #engineVersion}. vLLM answers {@code /health} 503 once its engine died
 * ({@code vllm/entrypoints/serve/instrumentator/health.py}); any status but 200 counts as a failed probe.
 *
 * <p>Threading: the scheduler it is given (the router's; it builds none) issues probes; results arrive on HTTP client threads and
 * update per-worker counters held in a concurrent map. Registry writes never happen under a lock
 * held here.
 */
public final class HealthChecker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final WorkerRegistry registry;
    private final HttpClient client;
    private final HealthSettings settings;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final int failureThreshold;
    private final int successThreshold;
    private final Consumer<Worker> onDiscovered;
    private final EngineType engineOverride;
    private final Map<String, int[]> streaks = new ConcurrentHashMap<>();
    /** Engine versions learned from {@code /version}, by worker id. */
    private final Map<String, String> versions = new ConcurrentHashMap<>();
    /** Receives each worker's model list: base model and adapter ids ({@link #onModelCards}). */
    private volatile BiConsumer<String, ModelCards> cardsListener = (id, cards) -> { };
    /** Workers whose model list is read again on every healthy probe (those known to serve adapters). */
    private volatile Predicate<String> refreshCards = id -> false;
    /** Runs the probe rounds: the composition root's, or (null) the HTTP client's, looked up at {@link #start}. */
    private final Scheduler givenScheduler;
    /** The next probe round, cancelled by {@link #close}. */
    private volatile Scheduler.Task next;
    private volatile boolean closed;

    public HealthChecker(WorkerRegistry registry, HttpClient client, long intervalMillis, long timeoutMillis,
            int failureThreshold, int successThreshold, Consumer<Worker> onDiscovered) {
        this(registry, client, SettingsBinder.parse(HealthSettings.class,
                "--health-check-interval-secs=" + intervalMillis / 1000.0, "--health-check-timeout-secs=" + timeoutMillis / 1000.0,
                "--health-failure-threshold=" + failureThreshold, "--health-success-threshold=" + successThreshold),
                onDiscovered, null, null);
    }

    /** Probe rounds on {@code client}'s scheduler. */
    public HealthChecker(WorkerRegistry registry, HttpClient client, HealthSettings settings, Consumer<Worker> onDiscovered,
            EngineType engineOverride) {
        this(registry, client, settings, onDiscovered, engineOverride, null);
    }

    /**
     * @param settings the {@code --health-*} settings
     * @param engineOverride the engine type of every worker ({@code --engine-type}), or null to discover it
     * @param scheduler runs the probe rounds (the router's, stopped by its owner), or null for {@code client}'s
     */
    public HealthChecker(WorkerRegistry registry, HttpClient client, HealthSettings settings, Consumer<Worker> onDiscovered,
            EngineType engineOverride, Scheduler scheduler) {
        this.givenScheduler = scheduler;
        this.engineOverride = engineOverride;
        this.registry = Objects.requireNonNull(registry, "registry");
        this.client = Objects.requireNonNull(client, "client");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.intervalMillis = settings.intervalMillis();
        this.timeoutMillis = settings.timeoutMillis();
        this.failureThreshold = settings.failureThreshold();
        this.successThreshold = settings.successThreshold();
        this.onDiscovered = onDiscovered == null ? w -> { } : onDiscovered;
    }

    /**
     * A worker's {@code /v1/models}: the served base model and the ids of the LoRA adapter cards whose
     * {@code parent} is that base.
     */
    public record ModelCards(String base, Set<String> adapters) {
        public ModelCards {
            adapters = Set.copyOf(adapters);
        }
    }

    /**
     * Sends every model list read (at discovery, and on each healthy probe of a worker {@code refresh} accepts,
     * so adapters loaded or unloaded later are seen) to {@code listener}, on an HTTP client thread.
     */
    public void onModelCards(BiConsumer<String, ModelCards> listener, Predicate<String> refresh) {
        this.cardsListener = Objects.requireNonNull(listener, "listener");
        this.refreshCards = Objects.requireNonNull(refresh, "refresh");
    }

    /** Probes now, then {@code intervalMillis} after each round ends, on the scheduler, until {@link #close}. */
    public void start() {
        Scheduler scheduler = givenScheduler != null ? givenScheduler : client.getScheduler();
        next = scheduler.schedule(() -> round(scheduler), 0, TimeUnit.MILLISECONDS);
    }

    private void round(Scheduler scheduler) {
        if (closed) {
            return;
        }
        try {
            probeAll();
        } catch (RuntimeException e) {
            LOG.warn("health probe round failed", e); // the next round still runs, as with a fixed-delay executor
        }
        if (!closed) {
            next = scheduler.schedule(() -> round(scheduler), intervalMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** Probes every worker now (also used by tests and by admin actions). */
    public void probeAll() {
        for (Worker worker : registry.fleet().all()) {
            probe(worker);
        }
    }

    private void probe(Worker worker) {
        client.newRequest(worker.url() + settings.checkPath())
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(result -> {
                    boolean ok = result.isSucceeded() && result.getResponse().getStatus() == 200;
                    record(worker.id(), ok);
                    if (ok && registry.get(worker.id()).map(w -> w.modelId() == null).orElse(false)) {
                        discover(worker);
                    } else if (ok && refreshCards.test(worker.id())) {
                        refreshCards(worker);
                    }
                });
    }

    /** Feeds one probe result (or a passive failure) into the worker's streak counters. */
    public void record(String workerId, boolean ok) {
        int[] streak = streaks.computeIfAbsent(workerId, k -> new int[2]);
        boolean flipHealthy;
        boolean flipUnhealthy;
        synchronized (streak) {
            if (ok) {
                streak[0]++;
                streak[1] = 0;
            } else {
                streak[1]++;
                streak[0] = 0;
            }
            flipHealthy = ok && streak[0] >= successThreshold;
            flipUnhealthy = !ok && streak[1] >= failureThreshold;
        }
        boolean healthy = registry.fleet().isHealthy(workerId);
        if (flipUnhealthy && healthy) {
            LOG.warn("worker {} marked unhealthy after {} consecutive failures", workerId, failureThreshold);
            registry.setHealthy(workerId, false);
        } else if (flipHealthy && !healthy) {
            LOG.info("worker {} healthy again", workerId);
            registry.setHealthy(workerId, true);
        }
    }

    private void discover(Worker worker) {
        client.newRequest(worker.url() + "/server_info")
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(new BufferingResponseListener(1 << 20) {
                    @Override
                    public void onComplete(Result result) {
                        if (!result.isSucceeded()) {
                            return;
                        }
                        int status = result.getResponse().getStatus();
                        if (status == 200) {
                            try {
                                JsonNode info = JSON.readTree(getContent());
                                fetchModels(worker, info);
                            } catch (java.io.IOException | RuntimeException e) {
                                LOG.debug("could not parse /server_info of {}", worker.url(), e);
                            }
                        } else if (status == 404) {
                            fetchModels(worker, null); // no /server_info: vLLM
                        }
                    }
                });
    }

    /** Reads {@code /v1/models}, then applies what was learned; {@code info} is the /server_info, or null. */
    private void fetchModels(Worker worker, JsonNode info) {
        client.newRequest(worker.url() + "/v1/models")
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(new BufferingResponseListener(1 << 20) {
                    @Override
                    public void onComplete(Result result) {
                        String served = null;
                        List<String> aliases = List.of();
                        if (result.isSucceeded() && result.getResponse().getStatus() == 200) {
                            try {
                                JsonNode models = JSON.readTree(getContent());
                                served = servedBaseModel(models);
                                aliases = otherBaseNames(models, served);
                                cardsListener.accept(worker.id(), modelCards(models));
                            } catch (java.io.IOException | RuntimeException e) {
                                LOG.debug("could not parse /v1/models of {}", worker.url(), e);
                            }
                        }
                        if (info == null && served == null) {
                            return; // neither /server_info nor /v1/models: try again on a later probe
                        }
                        try {
                            apply(worker, info, served, aliases);
                        } catch (RuntimeException e) {
                            LOG.debug("could not apply the discovery of {}", worker.url(), e);
                        }
                    }
                });
    }

    /**
     * A prefill worker's KV bootstrap port from its {@code /server_info}: kvroute's mock puts it at the top
     * level ({@code bootstrap_port}); SGLang returns its server arguments there, so a prefill engine
     * (`disaggregation_mode` "prefill") has it as {@code disaggregation_bootstrap_port} (SGLang
     * {@code srt/server_args.py}, default 8998). Null when neither is a port number.
     */
    static Integer bootstrapPort(JsonNode info) {
        JsonNode own = info.path("bootstrap_port");
        if (own.isIntegralNumber() && own.asInt() >= 1 && own.asInt() <= 65535) {
            return own.asInt();
        }
        JsonNode sglang = info.path("disaggregation_bootstrap_port");
        if ("prefill".equals(info.path("disaggregation_mode").asText(null)) && sglang.isIntegralNumber()
                && sglang.asInt() >= 1 && sglang.asInt() <= 65535) {
            return sglang.asInt();
        }
        return null;
    }

    /** The id of the first card without a parent (LoRA adapter cards name their base in {@code parent}). */
    static String servedBaseModel(JsonNode models) {
        for (JsonNode card : models.path("data")) {
            JsonNode parent = card.get("parent");
            String id = card.path("id").asText(null);
            if (id != null && !id.isEmpty() && (parent == null || parent.isNull())) {
                return id;
            }
        }
        return null;
    }

    /**
     * The ids of the other cards without a parent after {@code base}: one model served under several
     * names (vLLM {@code --served-model-name a b}: {@code vllm/entrypoints/openai/models/serving.py} lists
     * one base card per {@code base_model_paths} entry, all with {@code parent} null, and names adapters'
     * {@code parent} after the first). At most {@link #MAX_ALIASES}.
     */
    static List<String> otherBaseNames(JsonNode models, String base) {
        if (base == null) {
            return List.of();
        }
        Set<String> names = new LinkedHashSet<>();
        for (JsonNode card : models.path("data")) {
            JsonNode parent = card.get("parent");
            String id = card.path("id").asText(null);
            if (id != null && !id.isEmpty() && !id.equals(base) && (parent == null || parent.isNull())
                    && names.size() < MAX_ALIASES) {
                names.add(id);
            }
        }
        return List.copyOf(names);
    }

    /** Largest number of other served names kept per worker (a bound on what a worker can make the router hold). */
    static final int MAX_ALIASES = 64;

    /**
     * The base model (first card without a parent) and the adapters: cards whose {@code parent} is that base
     * (vLLM {@code vllm/entrypoints/openai/models/serving.py}: {@code id} = lora_name, {@code parent} = the
     * base's served name; SGLang {@code http_server.py} the same). At most {@link #MAX_ADAPTER_CARDS} are kept.
     */
    static ModelCards modelCards(JsonNode models) {
        String base = servedBaseModel(models);
        Set<String> adapters = new LinkedHashSet<>();
        if (base != null) {
            for (JsonNode card : models.path("data")) {
                String id = card.path("id").asText(null);
                JsonNode parent = card.get("parent");
                if (id != null && !id.isEmpty() && parent != null && parent.isTextual() && parent.asText().equals(base)
                        && adapters.size() < MAX_ADAPTER_CARDS) {
                    adapters.add(id);
                }
            }
        }
        return new ModelCards(base, adapters);
    }

    /** Largest number of adapter cards kept from one worker's list (a bound on what a worker can make the router hold). */
    static final int MAX_ADAPTER_CARDS = 4096;

    /** Reads the model list again for its adapters only (the served model is already known). */
    private void refreshCards(Worker worker) {
        client.newRequest(worker.url() + "/v1/models")
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(new BufferingResponseListener(1 << 20) {
                    @Override
                    public void onComplete(Result result) {
                        if (!result.isSucceeded() || result.getResponse().getStatus() != 200) {
                            return;
                        }
                        try {
                            cardsListener.accept(worker.id(), modelCards(JSON.readTree(getContent())));
                        } catch (java.io.IOException | RuntimeException e) {
                            LOG.debug("could not parse /v1/models of {}", worker.url(), e);
                        }
                    }
                });
    }

    private void apply(Worker worker, JsonNode info, String served, List<String> aliases) {
        EngineType engine = engineOverride != null ? engineOverride : info != null ? EngineType.SGLANG : EngineType.VLLM;
        String modelId = served;
        KvEventsAdvert advert = null;
        List<String> endpoints = List.of();
        Integer bootstrapPort = null;
        if (info != null) {
            if (modelId == null) {
                modelId = text(info, "served_model_name");
            }
            if (modelId == null) {
                modelId = info.path("model_id").asText(info.path("model_path").asText(null));
            }
            // SGLang's kv_events block of /server_info (docs/kv-events.md); a worker without one publishes nothing.
            advert = KvEventsAdvert.parse(info);
            endpoints = advert == null ? List.of() : advert.loadEndpoints(worker.host());
            WorkerRole advertised = WorkerRole.parse(info.path("role").asText(null));
            if (advertised != null && advertised != worker.role()) {
                LOG.error("worker {} is configured as {} but reports role {}; it gets no traffic",
                        worker.url(), worker.role().label(), advertised.label());
                registry.drain(worker.id());
            }
            bootstrapPort = bootstrapPort(info);
        }
        String learnedModel = modelId;
        // the other names only belong to the /v1/models base they were listed with
        List<String> learnedAliases = served != null && served.equals(modelId) ? aliases : List.of();
        KvEventsAdvert learnedAdvert = advert;
        List<String> learnedEndpoints = endpoints;
        Integer learnedBootstrap = bootstrapPort;
        registry.update(worker.id(), w -> {
            Worker updated = learnedModel == null ? w : w.withModelNames(learnedModel, learnedAliases);
            updated = updated.withEngine(engine);
            if (w.role() == WorkerRole.PREFILL && w.bootstrapPort() == null && learnedBootstrap != null) {
                updated = updated.withRole(WorkerRole.PREFILL, learnedBootstrap);
            }
            if (learnedAdvert != null) {
                updated = updated.withServerInfoKvEvents(learnedAdvert);
            }
            return w.loadEndpoints().isEmpty() && !learnedEndpoints.isEmpty()
                    ? updated.withLoadEndpoints(learnedEndpoints) : updated;
        });
        registry.get(worker.id()).ifPresent(onDiscovered);
        if (engine == EngineType.VLLM && !versions.containsKey(worker.id())) {
            fetchVersion(worker);
        }
    }

    /** The engine version a worker reported on {@code /version}, or null when not (yet) known. */
    public String engineVersion(String workerId) {
        return versions.get(workerId);
    }

    private void fetchVersion(Worker worker) {
        client.newRequest(worker.url() + "/version")
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(new BufferingResponseListener(64 * 1024) {
                    @Override
                    public void onComplete(Result result) {
                        if (!result.isSucceeded() || result.getResponse().getStatus() != 200) {
                            return;
                        }
                        try {
                            String version = text(JSON.readTree(getContent()), "version");
                            if (version != null && versions.putIfAbsent(worker.id(), version) == null) {
                                LOG.info("worker {} runs vLLM {}", worker.url(), version);
                            }
                        } catch (java.io.IOException | RuntimeException e) {
                            LOG.debug("could not parse /version of {}", worker.url(), e);
                        }
                    }
                });
    }

    /** A non-empty text field (SGLang's {@code served_model_name} may be a string or absent). */
    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? v.asText() : null;
    }

    @Override
    public void close() {
        closed = true;
        Scheduler.Task pending = next;
        if (pending != null) {
            pending.cancel();
        }
    }
}
