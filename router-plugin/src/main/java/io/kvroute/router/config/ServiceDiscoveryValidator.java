package io.kvroute.router.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Startup checks of the service discovery flags: {@code --service-discovery} excludes static worker
 * lists, needs a selector (a PD fleet needs both a prefill and a decode selector), and every
 * selector entry is a Kubernetes label {@code key=value}. Messages name the flag and the value.
 */
final class ServiceDiscoveryValidator {

    /** A label name segment or value: at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends. */
    private static final Pattern LABEL_PART = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
    /** An optional DNS-subdomain prefix of a label key (at most 253 characters). */
    private static final Pattern LABEL_PREFIX = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    /** A namespace name: a DNS-1123 label. */
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    private ServiceDiscoveryValidator() {}

    static ServiceDiscoveryConfig validate(RouterConfig.Builder b) {
        Map<String, String> selector = labels("--selector", b.selector);
        Map<String, String> prefill = labels("--prefill-selector", b.prefillSelector);
        Map<String, String> decode = labels("--decode-selector", b.decodeSelector);
        if (b.serviceDiscoveryPort < 1 || b.serviceDiscoveryPort > 65535) {
            throw ConfigValidator.fail("--service-discovery-port", b.serviceDiscoveryPort, "must be 1..65535");
        }
        if (b.bootstrapPortAnnotation == null || b.bootstrapPortAnnotation.isBlank()) {
            throw ConfigValidator.fail("--bootstrap-port-annotation", b.bootstrapPortAnnotation, "must not be empty");
        }
        if (b.serviceDiscoveryNamespace != null && !NAMESPACE.matcher(b.serviceDiscoveryNamespace).matches()) {
            throw ConfigValidator.fail("--service-discovery-namespace", b.serviceDiscoveryNamespace,
                    "must be a Kubernetes namespace name (lowercase alphanumerics and '-', at most 63)");
        }
        if (!b.serviceDiscovery) {
            String tuned = !selector.isEmpty() ? "--selector" : !prefill.isEmpty() ? "--prefill-selector"
                    : !decode.isEmpty() ? "--decode-selector" : b.serviceDiscoveryNamespace != null
                    ? "--service-discovery-namespace" : b.serviceDiscoveryPort != ServiceDiscoveryConfig.DEFAULT_PORT
                    ? "--service-discovery-port" : !b.bootstrapPortAnnotation.equals(
                            ServiceDiscoveryConfig.DEFAULT_BOOTSTRAP_PORT_ANNOTATION) ? "--bootstrap-port-annotation" : null;
            if (tuned != null) {
                throw new ConfigException(tuned + " requires --service-discovery");
            }
            return ServiceDiscoveryConfig.disabled();
        }
        String staticList = !b.workerUrls.isEmpty() ? "--worker-urls" : !b.pd.prefillUrls().isEmpty() ? "--prefill-urls"
                : !b.pd.decodeUrls().isEmpty() ? "--decode-urls" : null;
        if (staticList != null) {
            throw new ConfigException(staticList + " and --service-discovery are mutually exclusive: workers come either"
                    + " from a static list or from Kubernetes pods, not both");
        }
        if (prefill.isEmpty() != decode.isEmpty()) {
            throw new ConfigException("--prefill-selector and --decode-selector go together: a PD fleet needs both");
        }
        if (selector.isEmpty() && prefill.isEmpty()) {
            throw new ConfigException("--service-discovery needs --selector k=v (regular workers), or --prefill-selector"
                    + " with --decode-selector (PD workers)");
        }
        return new ServiceDiscoveryConfig(true, selector, prefill, decode, b.serviceDiscoveryNamespace,
                b.serviceDiscoveryPort, b.bootstrapPortAnnotation);
    }

    /** Parses {@code key=value} entries; a key given twice must repeat its value. */
    private static Map<String, String> labels(String flag, List<String> entries) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String entry : entries == null ? List.<String>of() : entries) {
            int eq = entry.indexOf('=');
            String key = eq < 0 ? entry : entry.substring(0, eq);
            String value = eq < 0 ? null : entry.substring(eq + 1);
            if (value == null || !validKey(key) || !(value.isEmpty() || LABEL_PART.matcher(value).matches())) {
                throw ConfigValidator.fail(flag, entry, "must be a Kubernetes label key=value");
            }
            String previous = out.putIfAbsent(key, value);
            if (previous != null && !previous.equals(value)) {
                throw ConfigValidator.fail(flag, entry, "gives label '" + key + "' two values");
            }
        }
        return out;
    }

    private static boolean validKey(String key) {
        int slash = key.indexOf('/');
        if (slash < 0) {
            return LABEL_PART.matcher(key).matches();
        }
        return LABEL_PREFIX.matcher(key.substring(0, slash)).matches()
                && LABEL_PART.matcher(key.substring(slash + 1)).matches();
    }
}
