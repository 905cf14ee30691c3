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

    /**
     * Reserve and settle as the request path does, in weighted tokens, for requests that each settle at a random
     * later time (mostly within 5 s; one in ten up to 90 s, so some settle after their slot has left the window and a
     * later second reuses it), some
     * with most of their prompt cached, some answered with a 5xx (everything given back), output never over the
     * budget. Over every 60 s of admissions, the weighted tokens the requests actually cost stay within the limit (the
     * "plus one request" is for a request larger than the whole limit; every reservation here is below it); and the
     * givebacks are used: the run admits far more than reservations alone would let through.
     */
    @Test
    void overAnyMinute_settledWeightedTokensStayWithinTheLimitPlusOneRequest_andGivebacksAreReused() {
        long limit = 20_000;
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 0, limit);
        java.util.SplittableRandom random = new java.util.SplittableRandom(11);
        record Pending(long settleAt, long second, long delta) {}
        java.util.PriorityQueue<Pending> pending = new java.util.PriorityQueue<>(
                java.util.Comparator.comparingLong(Pending::settleAt));
        java.util.List<long[]> admitted = new java.util.ArrayList<>(); // {nanos, weighted actual}
        long reservedTotal = 0;
        for (int step = 0; step < 40_000; step++) {
            nanos.addAndGet(random.nextLong(20_000_000L)); // up to 20 ms apart
            while (!pending.isEmpty() && pending.peek().settleAt() <= nanos.get()) {
                Pending p = pending.poll();
                limiter.settle(t, p.second(), p.delta());
            }
            long input = 1 + random.nextInt(800);
            long budget = 1 + random.nextInt(200);
            long reservation = RateLimiter.reservation(input, budget);
            RateLimiter.Verdict v = limiter.reserve(t, reservation);
            if (!v.allowed()) {
                continue;
            }
            reservedTotal += reservation;
            boolean failedUpstream = random.nextInt(10) == 0;
            long cached = random.nextBoolean() ? input - random.nextLong(input / 4 + 1) : 0;
            long actual = failedUpstream ? 0 : RateLimiter.weightedTokens(input, cached, random.nextLong(budget + 1));
            assertThat(actual).isLessThanOrEqualTo(reservation);
            admitted.add(new long[] {nanos.get(), actual});
            long lasts = random.nextInt(10) == 0 ? random.nextLong(90_000_000_000L) : random.nextLong(5_000_000_000L);
            pending.add(new Pending(nanos.get() + lasts, v.second(), actual - reservation));
        }
        long window = 60_000_000_000L;
        int lo = 0;
        long sum = 0;
        long actualTotal = 0;
        for (long[] a : admitted) {
            sum += a[1];
            actualTotal += a[1];
            while (a[0] - admitted.get(lo)[0] >= window) {
                sum -= admitted.get(lo++)[1];
            }
            assertThat(sum).as("weighted tokens admitted within 60 s").isLessThanOrEqualTo(limit);
        }
        long minutes = nanos.get() / window;
        // seed 11: 259,366 reserved and 129,195 used over 6.7 minutes of a 20,000 limit
        assertThat(reservedTotal).as("givebacks let reservations beyond the limit through")
                .isGreaterThan(3 * limit * minutes / 2);
        assertThat(actualTotal).as("and most of the limit is used").isGreaterThan(4 * limit * minutes / 5);
    }

    @Test
    void weightedTokens_countACachedInputTokenAtATenth_andRoundUpToAWholeToken() {
        assertThat(RateLimiter.weightedTokens(1_000, 800, 50)).isEqualTo(200 + 80 + 50);
        assertThat(RateLimiter.weightedTokens(1_000, 0, 50)).isEqualTo(1_050);
        assertThat(RateLimiter.weightedTokens(30, 30, 0)).as("0.1 x 30 is a whole 3").isEqualTo(3);
        assertThat(RateLimiter.weightedTokens(3, 3, 0)).as("0.3 rounds up").isEqualTo(1);
        assertThat(RateLimiter.weightedTokens(100, 500, 7)).as("cached clamped to the input").isEqualTo(10 + 7);
        assertThat(RateLimiter.reservation(1_000, 50)).as("reserved at full weight").isEqualTo(1_050);
    }

    /**
     * A request whose prompt turns out cached on its worker settles to a tenth for the cached part, so the same
     * prompt sent again fits where plain input + output tokens would be refused.
     */
    @Test
    void aCachedPrompt_settlesToItsWeightedTokens_andLeavesRoomForTheNextRequest() {
        TenantSpec t = new TenantSpec("t", 1, PriorityClass.DEFAULT, 0, 2_500);
        long reservation = RateLimiter.reservation(1_000, 100);
        for (int i = 0; i < 3; i++) {
            RateLimiter.Verdict v = limiter.reserve(t, reservation);
            assertThat(v.allowed()).as("request " + i).isTrue();
            long actual = RateLimiter.weightedTokens(1_000, 900, 100); // 100 uncached + 90 + 100 output
            limiter.settle(t, v.second(), actual - reservation);
            assertThat(limiter.tokensInWindow(t)).isEqualTo(290L * (i + 1));
            nanos.addAndGet(1_000_000_000L);
        }
        // unweighted, the three would count 3 x 1,100 = 3,300 > 2,500: the third would have been refused
    }

    @Test
    void aTenantWithoutLimits_isNeverRefused() {
        TenantSpec t = TenantSpec.plain("free");
        for (int i = 0; i < 1_000; i++) {
            assertThat(limiter.reserve(t, 1_000_000).allowed()).isTrue();
        }
    }
}
