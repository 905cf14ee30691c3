package io.kvroute.router.discovery;

import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.KvEventsTemplate;
import io.kvroute.router.worker.KvEventsTemplates;
import io.kvroute.router.worker.WorkerRole;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which pod is which worker, the SGLang router's rules: a pod is a worker while it is Running,
 * Ready, not terminating and has an IP. Its role comes from the first selector that matches, in
 * the order prefill, decode, regular (a selector matches when every one of its labels is present
 * with that value; an empty selector matches nothing). Its URL is {@code http://POD_IP:PORT}, the
 * port from the pod's {@value #WORKER_PORT_ANNOTATION} annotation when present, else
 * {@code --service-discovery-port}. A prefill pod's bootstrap port is read from
 * {@code --bootstrap-port-annotation}. Its KV-event endpoints come from the template in its
 * {@code --kv-events-annotation} (default {@code kvroute.io/kv-events}; the syntax of
 * {@code --kv-events-template}, the host being the pod IP), else from {@code --kv-events-template};
 * a pod whose annotation does not parse gets no KV events (warned once per pod and value) rather than
 * the default template, which was not meant for it. Thread-safe; its only state is which warnings
 * were logged.
 */
public final class DiscoveryRules {
    private static final Logger LOG = LoggerFactory.getLogger(DiscoveryRules.class);

    /** Per-pod HTTP port override (SGLang uses one port for every worker; mixed fleets need this). */
    public static final String WORKER_PORT_ANNOTATION = "kvroute.io/worker-port";

    private final ServiceDiscoveryConfig config;
    private final KvEventsTemplates templates;
    private final String kvEventsAnnotation;
    /** Pod key + annotation value pairs whose parse failure was logged. */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    public DiscoveryRules(ServiceDiscoveryConfig config) {
        this(config, KvEventsTemplates.NONE, KvEventsTemplates.DEFAULT_ANNOTATION);
    }

    /**
     * @param templates the fleet's KV-event templates (the default, or one for the pod's URL)
     * @param kvEventsAnnotation the pod annotation holding a pod's own template
     */
    public DiscoveryRules(ServiceDiscoveryConfig config, KvEventsTemplates templates, String kvEventsAnnotation) {
        this.config = Objects.requireNonNull(config, "config");
        this.templates = Objects.requireNonNull(templates, "templates");
        this.kvEventsAnnotation = Objects.requireNonNull(kvEventsAnnotation, "kvEventsAnnotation");
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
        String url = "http://" + host + ":" + port;
        return new DesiredWorker(url, role, bootstrapPort, pod.key(), kvEvents(pod, url));
    }

    /** The pod's annotated template, else the default one for its URL; null when neither applies or the annotation is bad. */
    KvEventsAdvert kvEvents(PodFacts pod, String url) {
        String annotated = pod.annotations().get(kvEventsAnnotation);
        if (annotated == null) {
            KvEventsTemplate fallback = templates.forUrl(url);
            return fallback == null ? null : fallback.advert();
        }
        try {
            return KvEventsTemplate.parse(annotated).advert();
        } catch (IllegalArgumentException e) {
            if (warned.add(pod.key() + "\n" + annotated)) {
                LOG.warn("pod {}: annotation {}='{}' is not a KV-event template ({}); the pod is routed without KV events",
                        pod.key(), kvEventsAnnotation, annotated, e.getMessage());
            }
            return null;
        }
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
