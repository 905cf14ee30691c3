package io.kvroute.router.discovery;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;

/** Reads {@link PodFacts} off a fabric8 {@link Pod}: the only place discovery looks inside one. */
final class PodFactsReader {

    private PodFactsReader() {}

    static String key(Pod pod) {
        ObjectMeta meta = pod.getMetadata();
        return meta.getNamespace() + "/" + meta.getName();
    }

    static PodFacts read(Pod pod) {
        ObjectMeta meta = pod.getMetadata();
        PodStatus status = pod.getStatus();
        boolean running = status != null && "Running".equals(status.getPhase());
        boolean ready = false;
        if (status != null && status.getConditions() != null) {
            for (PodCondition condition : status.getConditions()) {
                if ("Ready".equals(condition.getType())) {
                    ready = "True".equals(condition.getStatus());
                }
            }
        }
        String ip = status == null ? null : status.getPodIP();
        return new PodFacts(key(pod), running, ready, meta.getDeletionTimestamp() != null, ip, meta.getLabels(),
                meta.getAnnotations());
    }
}
