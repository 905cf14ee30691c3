package io.kvroute.bench.fleet;

/**
 * The router refused its configuration at startup (an unknown flag or policy name), before serving
 * anything. Scenarios report such a variant as skipped: it names a feature this build lacks.
 */
public final class RouterRejectedException extends Exception {

    private static final long serialVersionUID = 1L;

    public RouterRejectedException(String message, Throwable cause) {
        super(message, cause);
    }
}
