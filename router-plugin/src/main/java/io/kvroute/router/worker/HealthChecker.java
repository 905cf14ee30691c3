package io.kvroute.router.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.eclipse.jetty.client.HttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Active health checks and discovery. Every interval, each worker's {@code /health} is probed
 * asynchronously with a timeout; {@code failureThreshold} consecutive failures mark it unhealthy
 * and {@code successThreshold} consecutive successes mark it healthy again. A healthy worker whose
 * model id is still unknown is asked for {@code /server_info} (model id, the {@code kv_events} block
 * with its load and KV-event ranges), so
 * workers may start after the router.
 *
 * <p>Threading: one scheduler thread issues probes; results arrive on HTTP client threads and
 * update per-worker counters held in a concurrent map. Registry writes never happen under a lock
 * held here.
 */
public final class HealthChecker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final WorkerRegistry registry;
    private final HttpClient client;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final int failureThreshold;
    private final int successThreshold;
    private final Consumer<Worker> onDiscovered;
    private final Map<String, int[]> streaks = new ConcurrentHashMap<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvroute-health");
        t.setDaemon(true);
        return t;
    });

    public HealthChecker(WorkerRegistry registry, HttpClient client, long intervalMillis, long timeoutMillis,
            int failureThreshold, int successThreshold, Consumer<Worker> onDiscovered) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.client = Objects.requireNonNull(client, "client");
        this.intervalMillis = intervalMillis;
        this.timeoutMillis = timeoutMillis;
        this.failureThreshold = failureThreshold;
        this.successThreshold = successThreshold;
        this.onDiscovered = onDiscovered == null ? w -> { } : onDiscovered;
    }

    public void start() {
        scheduler.execute(this::probeAll);
        scheduler.scheduleWithFixedDelay(this::probeAll, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    /** Probes every worker now (also used by tests and by admin actions). */
    public void probeAll() {
        for (Worker worker : registry.fleet().all()) {
            probe(worker);
        }
    }

    private void probe(Worker worker) {
        client.newRequest(worker.url() + "/health")
                .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .send(result -> {
                    boolean ok = result.isSucceeded() && result.getResponse().getStatus() == 200;
                    record(worker.id(), ok);
                    if (ok && registry.get(worker.id()).map(w -> w.modelId() == null).orElse(false)) {
                        discover(worker);
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
                .send(new org.eclipse.jetty.client.BufferingResponseListener(1 << 20) {
                    @Override
                    public void onComplete(org.eclipse.jetty.client.Result result) {
                        if (!result.isSucceeded() || result.getResponse().getStatus() != 200) {
                            return;
                        }
                        try {
                            JsonNode info = JSON.readTree(getContent());
                            String modelId = info.path("model_id").asText(info.path("model_path").asText(null));
                            // SGLang's kv_events block (REFERENCE §9); a worker without one publishes nothing.
                            KvEventsAdvert advert = KvEventsAdvert.parse(info);
                            List<String> endpoints = advert == null ? List.of() : advert.loadEndpoints(worker.host());
                            WorkerRole advertised = WorkerRole.parse(info.path("role").asText(null));
                            if (advertised != null && advertised != worker.role()) {
                                LOG.error("worker {} is configured as {} but reports role {}; it gets no traffic",
                                        worker.url(), worker.role().label(), advertised.label());
                                registry.drain(worker.id());
                            }
                            Integer bootstrapPort = bootstrapPort(info);
                            registry.update(worker.id(), w -> {
                                Worker updated = modelId == null ? w : w.withModelId(modelId);
                                if (w.role() == WorkerRole.PREFILL && w.bootstrapPort() == null && bootstrapPort != null) {
                                    updated = updated.withRole(WorkerRole.PREFILL, bootstrapPort);
                                }
                                if (advert != null) {
                                    updated = updated.withKvEvents(advert);
                                }
                                return w.loadEndpoints().isEmpty() && !endpoints.isEmpty()
                                        ? updated.withLoadEndpoints(endpoints) : updated;
                            });
                            registry.get(worker.id()).ifPresent(onDiscovered);
                        } catch (java.io.IOException | RuntimeException e) {
                            LOG.debug("could not parse /server_info of {}", worker.url(), e);
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

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
