package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RetryRuleTest {

    private static final long MS = 1_000_000L;
    private static final long START = 5_000 * MS;

    /** 3 attempts, 50 ms x 1.5^(n-1) capped at 100 ms, no jitter (random 0.5 => factor 1), 2 s busy window. */
    private final RetryRule rule = new RetryRule(3, 50, 1.5, 100, 0.2, 2_000 * MS, () -> 0.5);

    private static AttemptFacts plain(int attempt, Failure failure) {
        return new AttemptFacts(attempt, failure, false, false, false, false, START, START);
    }

    private static Failure kind(FailureKind kind) {
        return Failure.of(kind);
    }

    @Test
    void plain_retriesTransportFailuresWithExponentialBackoffUntilTheLastAttempt() {
        assertThat(rule.afterPlain(plain(1, kind(FailureKind.CONNECT)))).isEqualTo(Step.retry(50 * MS));
        assertThat(rule.afterPlain(plain(2, kind(FailureKind.TIMEOUT)))).isEqualTo(Step.retry(75 * MS));
        assertThat(rule.afterPlain(plain(3, kind(FailureKind.RESET)))).isEqualTo(Step.GIVE_UP);
    }

    @Test
    void backoff_isCappedAndJitteredWithinBounds() {
        RetryRule low = new RetryRule(10, 50, 2, 100, 0.2, 0, () -> 0.0);
        RetryRule high = new RetryRule(10, 50, 2, 100, 0.2, 0, () -> 0.999_999);
        assertThat(low.backoffNanos(5)).isEqualTo(80 * MS); // capped 100 ms, x (1 - 0.2)
        assertThat(high.backoffNanos(5)).isBetween(119 * MS, 120 * MS); // x (1 + 0.2)
        assertThat(rule.backoffNanos(1)).isEqualTo(50 * MS);
    }

    @Test
    void plain_retriesBusyAndGatewayStatusesButNotOtherServerErrors() {
        for (int status : new int[] {429, 502, 503, 504}) {
            assertThat(rule.afterPlain(plain(1, Failure.status(status, Failure.Hop.WORKER))).action())
                    .as("status %d", status).isEqualTo(Step.Action.RETRY);
            assertThat(rule.discardsStatus(status, 1)).isTrue();
            assertThat(rule.discardsStatus(status, 3)).as("the last attempt relays %d", status).isFalse();
        }
        assertThat(rule.afterPlain(plain(1, Failure.status(500, Failure.Hop.WORKER)))).isEqualTo(Step.GIVE_UP);
        assertThat(rule.discardsStatus(500, 1)).isFalse();
    }

    @Test
    void plain_neverRetriesAClientError() {
        for (int status : new int[] {400, 404, 413, 422}) {
            assertThat(rule.afterPlain(plain(1, Failure.status(status, Failure.Hop.WORKER)))).isEqualTo(Step.GIVE_UP);
            assertThat(rule.discardsStatus(status, 1)).isFalse();
        }
    }

    @Test
    void neverRetriesOnceAByteReachedTheClient() {
        AttemptFacts afterFirstByte = new AttemptFacts(1, kind(FailureKind.RESET), true, false, false, false, START, START);
        assertThat(rule.afterPlain(afterFirstByte)).isEqualTo(Step.GIVE_UP);
        assertThat(rule.afterPd(afterFirstByte)).isEqualTo(Step.GIVE_UP);
    }

    @Test
    void stopsWithoutWritingOnceTheClientIsGone() {
        AttemptFacts gone = new AttemptFacts(1, kind(FailureKind.RESET), false, true, false, false, START, START);
        assertThat(rule.afterPlain(gone)).isEqualTo(Step.STOP);
        assertThat(rule.afterPd(gone)).isEqualTo(Step.STOP);
        AttemptFacts goneAfterSuccess = new AttemptFacts(1, null, true, true, false, false, START, START);
        assertThat(rule.afterPlain(goneAfterSuccess)).isEqualTo(Step.STOP);
    }

    @Test
    void neverRetriesWhileShuttingDown() {
        AttemptFacts shutdown = new AttemptFacts(1, kind(FailureKind.CONNECT), false, false, true, false, START, START);
        assertThat(rule.afterPlain(shutdown)).isEqualTo(Step.GIVE_UP);
        assertThat(rule.afterPd(shutdown)).isEqualTo(Step.GIVE_UP);
    }

    @Test
    void success_isDone() {
        assertThat(rule.afterPlain(plain(1, null))).isEqualTo(Step.DONE);
    }

    @Test
    void pd_busyIsRetriedOnlyInsideTheWindowCountedFromArrival() {
        Failure busy = new Failure(FailureKind.BUSY, 429, Failure.Hop.DECODE);
        AttemptFacts inside = new AttemptFacts(7, busy, false, false, false, false, START, START + 1_999 * MS);
        AttemptFacts atEdge = new AttemptFacts(7, busy, false, false, false, false, START, START + 2_000 * MS);
        assertThat(rule.afterPd(inside)).isEqualTo(Step.retry(RetryRule.PD_BACKOFF_NANOS));
        assertThat(rule.afterPd(atEdge)).isEqualTo(Step.GIVE_UP);
        RetryRule noWindow = new RetryRule(3, 50, 1.5, 100, 0, 0, () -> 0.5);
        assertThat(noWindow.busyWindowEnabled()).isFalse();
        assertThat(noWindow.afterPd(new AttemptFacts(1, busy, false, false, false, false, START, START)))
                .isEqualTo(Step.GIVE_UP);
    }

    @Test
    void pd_busyContinuationIsRetriedOnTheSamePairInsideTheWindow() {
        Failure busy = new Failure(FailureKind.BUSY, 429, Failure.Hop.DECODE);
        AttemptFacts continuation = new AttemptFacts(2, busy, false, false, false, true, START, START + 10 * MS);
        assertThat(rule.afterPd(continuation).action()).isEqualTo(Step.Action.RETRY);
    }

    @Test
    void pd_retriesFirstSegmentFailuresOnANewPairButNeverAContinuation() {
        Failure decodeReset = new Failure(FailureKind.RESET, 0, Failure.Hop.DECODE);
        assertThat(rule.afterPd(new AttemptFacts(1, decodeReset, false, false, false, false, START, START)))
                .isEqualTo(Step.retry(RetryRule.PD_BACKOFF_NANOS));
        assertThat(rule.afterPd(new AttemptFacts(3, decodeReset, false, false, false, false, START, START)))
                .isEqualTo(Step.GIVE_UP);
        assertThat(rule.afterPd(new AttemptFacts(1, decodeReset, false, false, false, true, START, START)))
                .isEqualTo(Step.GIVE_UP);
        assertThat(rule.afterPd(new AttemptFacts(1, Failure.status(500, Failure.Hop.PREFILL), false, false, false,
                false, START, START)).action()).isEqualTo(Step.Action.RETRY);
        assertThat(rule.afterPd(new AttemptFacts(1, Failure.status(400, Failure.Hop.PREFILL), false, false, false,
                false, START, START))).isEqualTo(Step.GIVE_UP);
    }

    @Test
    void failureLabels_keepTheMetricNames() {
        assertThat(Failure.status(502, Failure.Hop.WORKER).label()).isEqualTo("status_502");
        assertThat(Failure.status(400, Failure.Hop.PREFILL).label()).isEqualTo("prefill_400");
        assertThat(Failure.status(429, Failure.Hop.DECODE).label()).isEqualTo("busy");
        assertThat(new Failure(FailureKind.BAD_BODY, 0, Failure.Hop.DECODE).label()).isEqualTo("bad_decode_body");
        assertThat(Failure.of(FailureKind.CLIENT_GONE).label()).isEqualTo("client_gone");
    }
}
