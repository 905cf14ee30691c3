package io.kvroute.router.worker;

import java.util.Locale;

/** What a worker does in the fleet. */
public enum WorkerRole {
    /** Runs whole requests (prefill and decode). */
    REGULAR,
    /** Runs prefill only and serves KV over a bootstrap port (PD disaggregation). */
    PREFILL,
    /** Decodes from KV transferred by a prefill worker (PD disaggregation). */
    DECODE;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses "regular" / "prefill" / "decode" (case-insensitive); null for anything else. */
    public static WorkerRole parse(String text) {
        if (text == null) {
            return null;
        }
        for (WorkerRole role : values()) {
            if (role.label().equalsIgnoreCase(text.trim())) {
                return role;
            }
        }
        return null;
    }
}
