package io.kvroute.router.config;

import java.util.function.UnaryOperator;

/**
 * The router's two bearer tokens: the API key every path but the probes requires, and the admin
 * API's key. Handed to the front door and the admin routes. Neither value is ever printed: not in
 * a default, an error message or {@link #toString()}.
 */
public record AuthSettings(
        @Setting(name = "admin-api-key", defaultValue = Setting.UNSET,
                description = "Bearer token for the admin API; env KVROUTE_ADMIN_API_KEY. Unset = admin API disabled.")
        String adminApiKey,
        @Setting(name = "api-key", defaultValue = Setting.UNSET,
                description = "Bearer token required on every path but /healthz and /readyz (inference, /v1/models, "
                        + "/v1/loads, /metrics); env KVROUTE_API_KEY. Unset = open.")
        String apiKey) {

    /** The environment variables read for a key that no flag gave. */
    public static final String ADMIN_API_KEY_ENV = "KVROUTE_ADMIN_API_KEY";
    public static final String API_KEY_ENV = "KVROUTE_API_KEY";

    public AuthSettings {
        if (adminApiKey != null && adminApiKey.length() < 8) {
            throw new ConfigException("--admin-api-key must be at least 8 characters (value not shown)");
        }
        if (apiKey != null && apiKey.isEmpty()) {
            throw new ConfigException("--api-key must not be empty (value not shown)");
        }
    }

    public static final AuthSettings DEFAULTS = SettingsBinder.defaults(AuthSettings.class);

    /** These settings with each key no flag gave taken from {@code env} (an empty variable counts as unset). */
    public AuthSettings withEnvironment(UnaryOperator<String> env) {
        return new AuthSettings(adminApiKey != null ? adminApiKey : emptyToNull(env.apply(ADMIN_API_KEY_ENV)),
                apiKey != null ? apiKey : emptyToNull(env.apply(API_KEY_ENV)));
    }

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    /** Says whether each key is set, never its value. */
    @Override
    public String toString() {
        return "AuthSettings[adminApiKey=" + (adminApiKey == null ? "unset" : "set") + ", apiKey="
                + (apiKey == null ? "unset" : "set") + "]";
    }
}
