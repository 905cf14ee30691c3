package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

/**
 * The chat cannot be rendered exactly as the engine renders it: a message shape the engine's
 * preprocessing is not reproduced for, or an error the template raises. {@link #reason} is a stable,
 * low-cardinality metric label.
 */
public final class UnsupportedChatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    UnsupportedChatException(String reason, String message) {
        super(message);
        this.reason = requireNonNull(reason, "reason");
    }

    /** The metric label, e.g. {@code raise_exception}, {@code content_parts}. */
    public String reason() {
        return reason;
    }
}
