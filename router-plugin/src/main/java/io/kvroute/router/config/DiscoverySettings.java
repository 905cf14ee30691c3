package io.kvroute.router.config;

import java.util.List;

/**
 * The service discovery flags as given (SGLang router flag names): selectors are {@code k=v}
 * label entries, space or comma separated. {@link ServiceDiscoveryValidator} checks them together
 * with the static worker lists they exclude and turns them into the {@link ServiceDiscoveryConfig}
 * handed to Kubernetes discovery.
 */
public record DiscoverySettings(
        @Setting(name = "service-discovery", defaultValue = "false",
                description = "Discover workers from Kubernetes pods; excludes --worker-urls, --prefill-urls and --decode-urls")
        boolean enabled,
        @Setting(name = "selector", defaultValue = "", spaceSeparated = true,
                description = "Service discovery: labels k=v (all must match) of regular worker pods; space or comma separated")
        List<String> selector,
        @Setting(name = "prefill-selector", defaultValue = "", spaceSeparated = true,
                description = "Service discovery: labels k=v of PD prefill worker pods")
        List<String> prefillSelector,
        @Setting(name = "decode-selector", defaultValue = "", spaceSeparated = true,
                description = "Service discovery: labels k=v of PD decode worker pods")
        List<String> decodeSelector,
        @Setting(name = "service-discovery-namespace", defaultValue = Setting.UNSET,
                description = "Service discovery: namespace to watch (default: the client's namespace, else default).")
        String namespace,
        @Setting(name = "service-discovery-port", defaultValue = "80", min = 1, max = 65535,
                description = "Service discovery: workers' HTTP port, unless a pod's kvroute.io/worker-port annotation "
                        + "overrides it")
        int port,
        @Setting(name = "bootstrap-port-annotation", defaultValue = "sglang.ai/bootstrap-port",
                description = "Service discovery: pod annotation holding a prefill worker's bootstrap port")
        String bootstrapPortAnnotation) {

    public DiscoverySettings {
        selector = List.copyOf(selector);
        prefillSelector = List.copyOf(prefillSelector);
        decodeSelector = List.copyOf(decodeSelector);
    }

    public static final DiscoverySettings DEFAULTS = SettingsBinder.defaults(DiscoverySettings.class);
}
