package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.util.List;
import java.util.Locale;

/**
 * Prefill/decode disaggregation: the two static worker lists (a prefill entry may carry its KV
 * bootstrap port), the policies that choose each side, and how long a pair answered busy is
 * retried. Handed to the worker registry and the PD dispatch. The rules that also involve
 * {@code --policy} are checked by {@link ConfigValidator}.
 */
public record PdSettings(
        @Setting(name = "prefill-urls", defaultValue = "",
                description = "PD prefill workers: URL or URL=BOOTSTRAP_PORT, comma separated")
        List<String> prefillUrls,
        @Setting(name = "decode-urls", defaultValue = "", description = "PD decode workers, comma separated")
        List<String> decodeUrls,
        @Setting(name = "prefill-policy", defaultValue = Setting.UNSET,
                description = "Policy choosing the PD prefill worker (default: --policy).")
        String prefillPolicy,
        @Setting(name = "decode-policy", defaultValue = "power_of_two",
                description = "Policy choosing the PD decode worker")
        String decodePolicy,
        @Setting(name = "pd-busy-retry-timeout-secs", defaultValue = "0", min = 0,
                description = "Retry a PD request answered busy (429) before any output for up to this long; 0 = off")
        double busyRetryTimeoutSecs) {

    public PdSettings {
        prefillUrls = List.copyOf(prefillUrls);
        decodeUrls = List.copyOf(decodeUrls);
        prefillPolicy = prefillPolicy == null || prefillPolicy.isEmpty() ? null : prefillPolicy;
        for (String entry : prefillUrls) {
            int eq = entry.lastIndexOf('=');
            String problem = ConfigValidator.urlProblem(eq < 0 ? entry : entry.substring(0, eq));
            if (problem != null) {
                throw ConfigValidator.fail("--prefill-urls", entry, problem);
            }
            if (eq >= 0) {
                int port;
                try {
                    port = Integer.parseInt(entry.substring(eq + 1));
                } catch (NumberFormatException e) {
                    throw ConfigValidator.fail("--prefill-urls", entry, "bootstrap port must be a number");
                }
                if (port < 1 || port > 65535) {
                    throw ConfigValidator.fail("--prefill-urls", entry, "bootstrap port must be 1..65535");
                }
            }
        }
        for (String url : decodeUrls) {
            String problem = ConfigValidator.urlProblem(url);
            if (problem != null) {
                throw ConfigValidator.fail("--decode-urls", url, problem);
            }
        }
        if (prefillPolicy != null && !Policies.NAMES.contains(prefillPolicy.toLowerCase(Locale.ROOT))) {
            throw ConfigValidator.fail("--prefill-policy", prefillPolicy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
        if (List.of("cache_aware", "sticky").contains(decodePolicy.toLowerCase(Locale.ROOT))) {
            throw ConfigValidator.fail("--decode-policy", decodePolicy, "must be a load policy (round_robin, random, "
                    + "power_of_two): the decode side has no prefix to reuse");
        }
        if (!Policies.NAMES.contains(decodePolicy.toLowerCase(Locale.ROOT))) {
            throw ConfigValidator.fail("--decode-policy", decodePolicy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
        if (prefillUrls.isEmpty() != decodeUrls.isEmpty()) {
            throw new ConfigException("--prefill-urls and --decode-urls go together: PD needs at least one of each (got "
                    + prefillUrls.size() + " prefill, " + decodeUrls.size() + " decode)");
        }
    }

    public static final PdSettings DEFAULTS = SettingsBinder.defaults(PdSettings.class);

    /** The busy window in nanoseconds, from the client request's arrival. */
    public long busyRetryNanos() {
        return (long) (busyRetryTimeoutSecs * 1e9);
    }
}
