package io.kvroute.router.config;

import java.util.Map;

/**
 * Kubernetes service discovery as the discovery adapter reads it: {@link DiscoverySettings} (the flags)
 * checked and resolved by {@link ServiceDiscoveryValidator}. Selectors are exact-match label maps; an
 * empty map means "no pods of this role".
 *
 * @param enabled {@code --service-discovery}
 * @param selector {@code --selector}: pods that become regular workers
 * @param prefillSelector {@code --prefill-selector}: pods that become PD prefill workers
 * @param decodeSelector {@code --decode-selector}: pods that become PD decode workers
 * @param namespace {@code --service-discovery-namespace}, or null for the client's namespace
 * @param port {@code --service-discovery-port}: the workers' HTTP port unless a pod overrides it
 * @param bootstrapPortAnnotation {@code --bootstrap-port-annotation}: a prefill pod's KV bootstrap port
 */
public record ServiceDiscoveryConfig(boolean enabled, Map<String, String> selector, Map<String, String> prefillSelector,
        Map<String, String> decodeSelector, String namespace, int port, String bootstrapPortAnnotation) {

    public ServiceDiscoveryConfig {
        selector = Map.copyOf(selector);
        prefillSelector = Map.copyOf(prefillSelector);
        decodeSelector = Map.copyOf(decodeSelector);
    }

    public static ServiceDiscoveryConfig disabled() {
        return new ServiceDiscoveryConfig(false, Map.of(), Map.of(), Map.of(), null, DiscoverySettings.DEFAULTS.port(),
                DiscoverySettings.DEFAULTS.bootstrapPortAnnotation());
    }
}
