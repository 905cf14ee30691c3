package io.kvroute.router.discovery;

import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRole;
import java.util.Objects;

/**
 * A worker some pod says should exist.
 *
 * @param url the worker's base URL ({@code http://POD_IP:PORT})
 * @param role which selector matched
 * @param bootstrapPort a prefill pod's annotated KV bootstrap port, or null (unknown: leave it to
 *     what the worker's {@code /server_info} reports)
 * @param podKey the pod that asks for it
 * @param kvEvents the KV-event endpoints its annotation (or the fleet's default template) states, or null
 */
public record DesiredWorker(String url, WorkerRole role, Integer bootstrapPort, String podKey, KvEventsAdvert kvEvents) {

    public DesiredWorker(String url, WorkerRole role, Integer bootstrapPort, String podKey) {
        this(url, role, bootstrapPort, podKey, null);
    }

    public DesiredWorker {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(podKey, "podKey");
    }

    /** The registry id: derived from the URL, so every router replica agrees on it. */
    public String workerId() {
        return Worker.idFor(url);
    }

    /** The registry's new worker for this pod, with its templated KV-event endpoints when it has some. */
    public Worker toWorker() {
        Worker w = Worker.of(url, role, bootstrapPort);
        return kvEvents == null ? w : w.withKvEvents(kvEvents);
    }
}
