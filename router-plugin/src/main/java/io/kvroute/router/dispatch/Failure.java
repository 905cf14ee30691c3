package io.kvroute.router.dispatch;

import java.util.Locale;
import java.util.Objects;

/**
 * A typed failure: its kind, the worker status when one was received (0 otherwise) and the hop
 * ({@link Hop}) it happened on. {@link #label()} is the stable metric label.
 */
public record Failure(FailureKind kind, int status, Hop hop) {

    public Failure {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(hop, "hop");
    }

    public static Failure of(FailureKind kind) {
        return new Failure(kind, 0, Hop.WORKER);
    }

    public static Failure status(int status, Hop hop) {
        return new Failure(status == 429 ? FailureKind.BUSY : FailureKind.UPSTREAM_STATUS, status, hop);
    }

    /** Metric label: {@code connect}, {@code timeout}, {@code status_502}, {@code prefill_400}, {@code busy}, ... */
    public String label() {
        if (kind == FailureKind.UPSTREAM_STATUS) {
            return (hop == Hop.WORKER ? "status" : hop.name().toLowerCase(Locale.ROOT)) + "_" + status;
        }
        if (kind == FailureKind.BAD_BODY) {
            return "bad_" + hop.name().toLowerCase(Locale.ROOT) + "_body";
        }
        return kind.name().toLowerCase(Locale.ROOT);
    }

    /** True when the worker itself is to blame (counts against its breaker and upstream-error meter). */
    public boolean blamesWorker() {
        switch (kind) {
            case CONNECT:
            case TIMEOUT:
            case RESET:
            case BAD_BODY:
                return true;
            case UPSTREAM_STATUS:
                return status >= 500;
            default:
                return false;
        }
    }

    /** The hop an upstream request goes to. */
    public enum Hop {
        /** A regular (non-PD) worker. */
        WORKER,
        /** The prefill side of a PD pair. */
        PREFILL,
        /** The decode side of a PD pair. */
        DECODE
    }
}
