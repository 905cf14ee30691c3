package io.kvroute.router.discovery;

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
 */
public record DesiredWorker(String url, WorkerRole role, Integer bootstrapPort, String podKey) {

    public DesiredWorker {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(podKey, "podKey");
    }

    /** The registry id: derived from the URL, so every router replica agrees on it. */
    public String workerId() {
        return Worker.idFor(url);
    }
}
