package io.kvroute.router.config;

import io.kvroute.router.policy.Policies;
import java.util.Locale;

/**
 * Session affinity ({@code --policy sticky}, or any request carrying the session header): which
 * header names the session, how long an unused session keeps its worker, and the policy that
 * places a new session. Handed to the sticky policies and the front door's header lookup.
 */
public record SessionSettings(
        @Setting(name = "session-id-header", defaultValue = "x-session-id",
                description = "Header carrying the session key for session affinity")
        String idHeader,
        @Setting(name = "session-idle-secs", defaultValue = "600", positive = true,
                description = "A session unused this long forgets its worker")
        double idleSecs,
        @Setting(name = "sticky-fallback-policy", defaultValue = "power_of_two",
                description = "Policy choosing a new session's worker under --policy sticky")
        String fallbackPolicy) {

    public SessionSettings {
        if (idHeader.isBlank()) {
            throw ConfigValidator.fail("--session-id-header", idHeader, "must not be empty");
        }
        String fallback = fallbackPolicy.toLowerCase(Locale.ROOT);
        if (!Policies.NAMES.contains(fallback) || fallback.equals("sticky")) {
            throw ConfigValidator.fail("--sticky-fallback-policy", fallbackPolicy, "must be a policy other than sticky");
        }
    }

    public static final SessionSettings DEFAULTS = SettingsBinder.defaults(SessionSettings.class);
}
