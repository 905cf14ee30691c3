package io.kvroute.router.kvevents;

import io.kvroute.protocol.PageHash;
import java.util.Locale;

/**
 * How the router keys an engine's blocks in the {@link BlockIndex} ({@code --kv-events-hash}).
 * {@code /server_info} cannot tell: SGLang's {@code kv_events} block has no hash field (its hash is
 * reproducible, so {@link #ENGINE} is right for it) and vLLM serves no {@code kv_events} block.
 */
public enum KvHashMode {
    /** By the engine's own block hashes, which the router reproduces ({@link PageHash}, SGLang's page hash). */
    ENGINE,
    /**
     * By the router's own chained hash of each event's {@code token_ids} ({@link TokenChainHash}),
     * with a per-publisher map from the engine's hashes to the router's for parents and removals
     * ({@link TokenKeying}). For engines whose hashes cannot be reproduced (vLLM's per-process seed).
     */
    TOKENS;

    /** The flag value: {@code engine} or {@code tokens}. */
    public String flagValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a flag value (case-insensitive); null when it is neither. */
    public static KvHashMode parse(String value) {
        if (value == null) {
            return null;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "engine" -> ENGINE;
            case "tokens" -> TOKENS;
            default -> null;
        };
    }
}
