package io.kvroute.router.http;

/** A request rejected at the edge with a precise status; never escapes as a 500. */
final class ApiException extends Exception {
    private static final long serialVersionUID = 1L;

    final int status;
    final String type;

    ApiException(int status, String message) {
        this(status, OpenAiErrors.typeFor(status), message);
    }

    ApiException(int status, String type, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
    }
}
