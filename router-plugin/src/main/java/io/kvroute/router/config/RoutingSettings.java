package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.util.List;
import java.util.Locale;

/**
 * Which workers serve which models and how a request picks one: the static worker list, the
 * routing policy and its power-of-k sample size, the served model ids. Handed to the worker
 * registry and the policy factory.
 */
public record RoutingSettings(
        @Setting(name = "worker-urls", defaultValue = "", description = "Worker base URLs, comma separated")
        List<String> workerUrls,
        @Setting(name = "policy", defaultValue = "round_robin",
                description = "Routing policy; also the PD prefill policy unless --prefill-policy is set")
        String policy,
        @Setting(name = "min-load-choices", defaultValue = "2", min = 1, description = "k for power-of-k sampling")
        int minLoadChoices,
        @Setting(name = "model-ids", defaultValue = "",
                description = "Served model ids; learned from workers' /server_info when empty")
        List<String> modelIds) {

    public RoutingSettings {
        workerUrls = List.copyOf(workerUrls);
        modelIds = modelIds == null ? List.of() : List.copyOf(modelIds);
        for (String url : workerUrls) {
            String problem = ConfigValidator.urlProblem(url);
            if (problem != null) {
                throw ConfigValidator.fail("--worker-urls", url, problem);
            }
        }
        if (!Policies.NAMES.contains(policy.toLowerCase(Locale.ROOT))) {
            throw ConfigValidator.fail("--policy", policy, "is not one of: " + String.join(", ", Policies.NAMES));
        }
    }

    public static final RoutingSettings DEFAULTS = SettingsBinder.defaults(RoutingSettings.class);
}
