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

    static ServiceDiscoveryConfig validate(DiscoverySettings d, RoutingSettings routing, PdSettings pd) {
        Map<String, String> selector = labels("--selector", d.selector());
        Map<String, String> prefill = labels("--prefill-selector", d.prefillSelector());
        Map<String, String> decode = labels("--decode-selector", d.decodeSelector());
        if (d.bootstrapPortAnnotation().isBlank()) {
            throw ConfigValidator.fail("--bootstrap-port-annotation", d.bootstrapPortAnnotation(), "must not be empty");
        }
        if (d.namespace() != null && !NAMESPACE.matcher(d.namespace()).matches()) {
            throw ConfigValidator.fail("--service-discovery-namespace", d.namespace(),
                    "must be a Kubernetes namespace name (lowercase alphanumerics and '-', at most 63)");
        }
        if (!d.enabled()) {
            String tuned = SettingsBinder.firstChangedFlag(d, DiscoverySettings.DEFAULTS);
            if (tuned != null) {
                throw new ConfigException(tuned + " requires --service-discovery");
            }
            return ServiceDiscoveryConfig.disabled();
        }
        String staticList = !routing.workerUrls().isEmpty() ? "--worker-urls" : !pd.prefillUrls().isEmpty() ? "--prefill-urls"
                : !pd.decodeUrls().isEmpty() ? "--decode-urls" : null;
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
        return new ServiceDiscoveryConfig(true, selector, prefill, decode, d.namespace(), d.port(),
                d.bootstrapPortAnnotation());
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
