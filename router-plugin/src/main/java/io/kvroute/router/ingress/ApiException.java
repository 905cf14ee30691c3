package io.kvroute.router.ingress;

import io.kvroute.router.dispatch.ErrorBodies;

/** A request rejected at the edge with a precise status; never escapes as a 500. */
final class ApiException extends Exception {
    private static final long serialVersionUID = 1L;

    final int status;
    final String type;
    /** The request field the error is about (OpenAI's {@code param}), or null. */
    final String param;
    /** Extra response headers ({@code Retry-After}, the QoS reason header), empty for most errors. */
    final java.util.Map<String, String> headers = new java.util.LinkedHashMap<>(2);

    ApiException(int status, String message) {
        this(status, ErrorBodies.typeFor(status), message);
    }

    /**
     * An error; a message that starts with a quoted field path ({@code 'max_tokens' must be ...},
     * {@code 'messages[2].content' ...}) is about that field, and the path becomes the error's {@code param}.
     */
    ApiException(int status, String type, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = leadingField(message);
    }

    /** Adds a response header to this error; returns it. */
    ApiException header(String name, String value) {
        headers.put(name, value);
        return this;
    }

    /** The quoted path a message starts with, or null. */
    static String leadingField(String message) {
        if (message == null || message.length() < 3 || message.charAt(0) != '\'') {
            return null;
        }
        int end = message.indexOf('\'', 1);
        return end > 1 ? message.substring(1, end) : null;
    }
}
