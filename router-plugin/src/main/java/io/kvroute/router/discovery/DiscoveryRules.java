package io.kvroute.router.discovery;

import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.worker.WorkerRole;
import java.util.Map;
import java.util.Objects;

/**
 * Which pod is which worker, the SGLang router's rules: a pod is a worker while it is Running,
 * Ready, not terminating and has an IP. Its role comes from the first selector that matches, in
 * the order prefill, decode, regular (a selector matches when every one of its labels is present
 * with that value; an empty selector matches nothing). Its URL is {@code http://POD_IP:PORT}, the
 * port from the pod's {@value #WORKER_PORT_ANNOTATION} annotation when present, else
 * {@code --service-discovery-port}. A prefill pod's bootstrap port is read from
 * {@code --bootstrap-port-annotation}. Stateless and thread-safe.
 */
public final class DiscoveryRules {

    /** Per-pod HTTP port override (SGLang uses one port for every worker; mixed fleets need this). */
    public static final String WORKER_PORT_ANNOTATION = "kvroute.io/worker-port";

    private final ServiceDiscoveryConfig config;

    public DiscoveryRules(ServiceDiscoveryConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    /** The worker {@code pod} should be, or null when it should be none. */
    public DesiredWorker classify(PodFacts pod) {
        if (!pod.running() || !pod.ready() || pod.terminating() || pod.ip() == null || pod.ip().isBlank()) {
            return null;
        }
        WorkerRole role = roleOf(pod.labels());
        if (role == null) {
            return null;
        }
        String portText = pod.annotations().get(WORKER_PORT_ANNOTATION);
        Integer port = portText == null ? Integer.valueOf(config.port()) : parsePort(portText);
        if (port == null) {
            return null; // a malformed override must not silently route to the default port
        }
        Integer bootstrapPort = role == WorkerRole.PREFILL
                ? parsePort(pod.annotations().get(config.bootstrapPortAnnotation())) : null;
        String host = pod.ip().contains(":") ? "[" + pod.ip() + "]" : pod.ip();
        return new DesiredWorker("http://" + host + ":" + port, role, bootstrapPort, pod.key());
    }

    WorkerRole roleOf(Map<String, String> labels) {
        if (matches(config.prefillSelector(), labels)) {
            return WorkerRole.PREFILL;
        }
        if (matches(config.decodeSelector(), labels)) {
            return WorkerRole.DECODE;
        }
        if (matches(config.selector(), labels)) {
            return WorkerRole.REGULAR;
        }
        return null;
    }

    private static boolean matches(Map<String, String> selector, Map<String, String> labels) {
        if (selector.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, String> wanted : selector.entrySet()) {
            if (!wanted.getValue().equals(labels.get(wanted.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** A TCP port 1..65535, or null for anything else (absent, blank, not a number, out of range). */
    static Integer parsePort(String text) {
        if (text == null) {
            return null;
        }
        try {
            int port = Integer.parseInt(text.trim());
            return port >= 1 && port <= 65535 ? port : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
