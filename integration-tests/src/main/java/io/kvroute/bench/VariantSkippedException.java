package io.kvroute.bench;

/**
 * A variant cannot run on this build (e.g. the router rejects the policy or flag it tests). The
 * harness reports it as skipped and goes on with the next variant; a skipped baseline makes the next
 * variant run the baseline.
 */
public final class VariantSkippedException extends Exception {

    private static final long serialVersionUID = 1L;

    public VariantSkippedException(String message, Throwable cause) {
        super(message, cause);
    }
}
