package io.kvroute.router.discovery;

import java.util.Map;
import java.util.Objects;

/**
 * What discovery needs to know about one pod, read off the Kubernetes object by the adapter.
 *
 * @param key {@code namespace/name}, unique among live pods
 * @param running the pod's phase is {@code Running}
 * @param ready the pod's {@code Ready} condition is {@code True}
 * @param terminating the pod has a deletion timestamp (it is shutting down)
 * @param ip the pod IP, or null before one is assigned
 * @param labels the pod's labels
 * @param annotations the pod's annotations
 */
public record PodFacts(String key, boolean running, boolean ready, boolean terminating, String ip,
        Map<String, String> labels, Map<String, String> annotations) {

    public PodFacts {
        Objects.requireNonNull(key, "key");
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    }
}
