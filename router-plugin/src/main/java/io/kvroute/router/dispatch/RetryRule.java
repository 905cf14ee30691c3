package io.kvroute.router.dispatch;

import io.kvroute.router.config.RetrySettings;
import java.util.Objects;
import java.util.function.DoubleSupplier;

/**
 * The retry and busy-window rules as one immutable, pure object (grpc-java's {@code RetryPolicy};
 * our {@code worker/CircuitBreaker}): given an attempt's {@link AttemptFacts} it returns the next
 * {@link Step}, and the adapter only executes it.
 *
 * <p>Never retried: once a byte reached the client, once the client went away (STOP), while
 * shutting down, or for a client-side answer (4xx other than 429). Plain workers: a connect
 * failure, reset or timeout, or a 429/502/503/504 is retried up to {@code maxAttempts} with
 * exponential backoff and jitter; the last attempt relays the worker's answer verbatim. PD pairs:
 * a transport failure or 5xx of a first segment is retried on a new pair after a short fixed
 * backoff while attempts remain; a 429 is retried (first segment on a new pair, a continuation on
 * the same pair) only inside the busy window, which starts at the client request's arrival.
 *
 * <p>Randomness (jitter) is an injected {@link DoubleSupplier} of values in [0, 1).
 */
public final class RetryRule {

    /** Fixed PD backoff: short, because a new pair is usually chosen. */
    static final long PD_BACKOFF_NANOS = 50_000_000L;

    private final int maxAttempts;
    private final double initialBackoffMillis;
    private final double backoffMultiplier;
    private final double maxBackoffMillis;
    private final double jitter;
    private final long busyWindowNanos;
    private final DoubleSupplier random;

    public RetryRule(int maxAttempts, double initialBackoffMillis, double backoffMultiplier, double maxBackoffMillis,
            double jitter, long busyWindowNanos, DoubleSupplier random) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        this.maxAttempts = maxAttempts;
        this.initialBackoffMillis = initialBackoffMillis;
        this.backoffMultiplier = backoffMultiplier;
        this.maxBackoffMillis = maxBackoffMillis;
        this.jitter = jitter;
        this.busyWindowNanos = Math.max(0, busyWindowNanos);
        this.random = Objects.requireNonNull(random, "random");
    }

    /** The rule configured by {@code --retry-*} and {@code --pd-busy-retry-timeout-secs}. */
    public static RetryRule from(RetrySettings retry, long busyWindowNanos, DoubleSupplier random) {
        return new RetryRule(retry.maxAttempts(), retry.initialBackoffMs(), retry.backoffMultiplier(),
                retry.maxBackoffMs(), retry.jitter(), busyWindowNanos, random);
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /** True when attempt {@code attempt} is the last one: its answer is relayed whatever it is. */
    public boolean isFinal(int attempt) {
        return attempt >= maxAttempts;
    }

    /** Worker statuses worth another worker: busy, bad gateway, unavailable, gateway timeout. */
    public static boolean isRetryableStatus(int status) {
        return status == 429 || status == 502 || status == 503 || status == 504;
    }

    /** Plain workers: true when an answer with {@code status} is discarded so that attempt can be retried. */
    public boolean discardsStatus(int status, int attempt) {
        return isRetryableStatus(status) && !isFinal(attempt);
    }

    /** The busy window is on (a PD 429 may be retried at all). */
    public boolean busyWindowEnabled() {
        return busyWindowNanos > 0;
    }

    /** Next step after an attempt on a plain worker. */
    public Step afterPlain(AttemptFacts facts) {
        Step early = common(facts);
        if (early != null) {
            return early;
        }
        Failure failure = facts.failure();
        boolean retryable = switch (failure.kind()) {
            case CONNECT, TIMEOUT, RESET, BUSY -> true;
            case UPSTREAM_STATUS -> isRetryableStatus(failure.status());
            default -> false;
        };
        return retryable && !isFinal(facts.attempt()) ? Step.retry(backoffNanos(facts.attempt())) : Step.GIVE_UP;
    }

    /** Next step after a PD attempt (one prefill and one decode call for one segment). */
    public Step afterPd(AttemptFacts facts) {
        Step early = common(facts);
        if (early != null) {
            return early;
        }
        Failure failure = facts.failure();
        if (failure.kind() == FailureKind.BUSY) {
            return facts.nowNanos() - facts.startNanos() < busyWindowNanos ? Step.retry(PD_BACKOFF_NANOS) : Step.GIVE_UP;
        }
        boolean retryable = switch (failure.kind()) {
            case CONNECT, TIMEOUT, RESET -> true;
            case UPSTREAM_STATUS -> failure.status() >= 500;
            default -> false;
        };
        return retryable && !facts.continuation() && !isFinal(facts.attempt()) ? Step.retry(PD_BACKOFF_NANOS)
                : Step.GIVE_UP;
    }

    private static Step common(AttemptFacts facts) {
        if (facts.clientGone()) {
            return Step.STOP;
        }
        if (facts.failure() == null) {
            return Step.DONE;
        }
        if (facts.shuttingDown() || facts.clientSawBytes()) {
            return Step.GIVE_UP;
        }
        return null;
    }

    /** Backoff before attempt {@code failedAttempt + 1}: initial x multiplier^(n-1), capped, with jitter. */
    long backoffNanos(int failedAttempt) {
        double millis = initialBackoffMillis * Math.pow(backoffMultiplier, failedAttempt - 1);
        millis = Math.min(millis, maxBackoffMillis);
        millis *= 1 + jitter * (2 * random.getAsDouble() - 1);
        return (long) (Math.max(0, millis) * 1_000_000);
    }
}
