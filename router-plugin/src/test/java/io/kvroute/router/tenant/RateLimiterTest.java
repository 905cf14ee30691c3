package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link RateLimiter} on a fake clock. */
class RateLimiterTest {

    private final AtomicLong nanos = new AtomicLong(5);
    private final RateLimiter limiter = new RateLimiter(nanos::get);

    @Test
    void requestsPerMinute_refuseTheNextRequest_withTheSecondsUntilOneRefills() {
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 2, 0);
        assertThat(limiter.reserve(t, 10).allowed()).isTrue();
        assertThat(limiter.reserve(t, 10).allowed()).isTrue();
        RateLimiter.Verdict refused = limiter.reserve(t, 10);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.reason()).isEqualTo("rate_limit_requests");
        assertThat(refused.retryAfterSeconds()).isEqualTo(61); // both were made in this second: it must slide out
        nanos.addAndGet(60_000_000_000L);
        assertThat(limiter.reserve(t, 10).allowed()).isFalse();
        nanos.addAndGet(1_000_000_000L);
        assertThat(limiter.reserve(t, 10).allowed()).isTrue();
    }

    @Test
    void tokensPerMinute_reserveAtAdmission_andSettleWithTheActualOutput() {
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 0, 1_000);
        RateLimiter.Verdict first = limiter.reserve(t, 600);
        assertThat(first.allowed()).isTrue();
        nanos.addAndGet(10_000_000_000L);
        RateLimiter.Verdict refused = limiter.reserve(t, 600);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.reason()).isEqualTo("rate_limit_tokens");
        assertThat(refused.retryAfterSeconds()).isEqualTo(51); // the first reservation leaves the window in 51 s
        limiter.settle(t, first.second(), -300); // it produced 300 fewer tokens than reserved
        assertThat(limiter.tokensInWindow(t)).isEqualTo(300);
        assertThat(limiter.reserve(t, 600).allowed()).isTrue();
    }

    @Test
    void aRequestLargerThanTheLimit_passesOnlyWhenTheBucketIsFull_soAWindowAdmitsAtMostTheLimitPlusOneRequest() {
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 0, 1_000);
        assertThat(limiter.reserve(t, 5_000).allowed()).isTrue();
        assertThat(limiter.reserve(t, 1).allowed()).isFalse();
        nanos.addAndGet(60_000_000_000L);
        assertThat(limiter.reserve(t, 1).allowed()).isFalse();
        nanos.addAndGet(1_000_000_000L);
        assertThat(limiter.reserve(t, 1).allowed()).isTrue();
    }

    @Test
    void overAnyMinute_admittedTokensStayWithinTheLimitPlusOneRequest() {
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 0, 6_000);
        long[] admittedAt = new long[100_000];
        long[] tokens = new long[100_000];
        int n = 0;
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (int step = 0; step < 20_000; step++) {
            nanos.addAndGet(random.nextLong(50_000_000L)); // up to 50 ms apart: 4x the limit on offer
            long cost = 1 + random.nextInt(400);
            if (limiter.reserve(t, cost).allowed()) {
                admittedAt[n] = nanos.get();
                tokens[n++] = cost;
            }
        }
        long window = 60_000_000_000L;
        int lo = 0;
        long sum = 0;
        for (int hi = 0; hi < n; hi++) {
            sum += tokens[hi];
            while (admittedAt[hi] - admittedAt[lo] >= window) {
                sum -= tokens[lo++];
            }
            assertThat(sum).isLessThanOrEqualTo(6_000 + 400);
        }
    }

    @Test
    void aTenantWithoutLimits_isNeverRefused() {
        TenantSpec t = TenantSpec.plain("free");
        for (int i = 0; i < 1_000; i++) {
            assertThat(limiter.reserve(t, 1_000_000).allowed()).isTrue();
        }
    }
}
