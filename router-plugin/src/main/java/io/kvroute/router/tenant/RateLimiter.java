package io.kvroute.router.tenant;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per-tenant rate limits in requests per minute and weighted tokens per minute, over a sliding window of
 * {@value #SLOTS} one-second slots. Tokens are weighted as the fair queue's service is ({@link #weightedTokens}:
 * an input token cached on the worker that served the request counts {@link QosGate#WEIGHT_CACHED}, an uncached
 * one {@link QosGate#WEIGHT_UNCACHED}, an output token {@link QosGate#WEIGHT_OUTPUT}). A request reserves one
 * request and an upper bound of its tokens at admission, when nothing is known cached yet: its exact input tokens
 * plus its {@code max_tokens} or the default, all at full weight ({@link #reservation}); {@link #settle} corrects
 * that by the weighted actual when it ends (cached input from routing, output as relayed), in the slot the
 * reservation was made in. This is
 * SMG's reserve/settle design ({@code model_gateway/src/rate_limit/bucket.rs}) wired into the request
 * path, with a window instead of a refilling bucket: a bucket that holds a minute's allowance admits
 * up to twice the limit within one minute (a full bucket, then the refill), a window does not.
 *
 * <p>The bound: the check covers the last 61 s, so every 60 s window admits at most the limit, plus
 * one request larger than the whole limit (admitted only when the window is empty). That holds for the
 * settled, weighted tokens too: a settlement only lowers what a request counts while its weighted actual stays
 * within its reservation, so when the last request of a window was admitted, every earlier one counted at
 * least its final amount. (Output beyond the reserved budget, from a request without {@code max_tokens}, counts
 * when settled and makes later requests wait instead.) A refusal carries the seconds until enough of the window
 * has slid out ({@code Retry-After}).
 *
 * <p>Each router replica keeps its own windows: with N replicas behind a balancer a tenant gets up to
 * N times its limit unless each replica is given its share. Thread-safe: one small lock per tenant.
 */
public final class RateLimiter {

    /** One-second slots the window spans: 60 s plus the partial second at each end. */
    static final int SLOTS = 61;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final LongSupplier nanoTime;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    public RateLimiter(LongSupplier nanoTime) {
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    }

    /**
     * The outcome of {@link #reserve}: allowed (with the slot second to {@link #settle} against), or
     * refused with a reason label and a retry delay in seconds.
     */
    public record Verdict(boolean allowed, String reason, long retryAfterSeconds, long second) {}

    /**
     * The weighted tokens a request counts against its tokens-per-minute limit, rounded up to a whole token:
     * {@code WEIGHT_UNCACHED × uncached input + WEIGHT_CACHED × cached input + WEIGHT_OUTPUT × output}, the same
     * weights as the fair queue's service. {@code cachedTokens} is clamped to {@code 0..inputTokens}.
     */
    public static long weightedTokens(long inputTokens, long cachedTokens, long outputTokens) {
        long input = Math.max(0, inputTokens);
        long cached = Math.min(Math.max(0, cachedTokens), input);
        double weighted = QosGate.WEIGHT_UNCACHED * (input - cached) + QosGate.WEIGHT_CACHED * cached
                + QosGate.WEIGHT_OUTPUT * Math.max(0, outputTokens);
        return (long) Math.ceil(weighted);
    }

    /**
     * What a request reserves at admission: its input and its output budget at full weight, nothing known cached
     * yet, so that {@link #weightedTokens} of what it then does (output within the budget) never exceeds it.
     */
    public static long reservation(long inputTokens, long outputBudgetTokens) {
        return weightedTokens(inputTokens, 0, outputBudgetTokens);
    }

    /** Reserves one request and {@code tokens} (weighted) for {@code tenant}, or refuses without taking anything. */
    public Verdict reserve(TenantSpec tenant, long tokens) {
        long now = Math.floorDiv(nanoTime.getAsLong(), NANOS_PER_SECOND);
        if (tenant.requestsPerMinute() == 0 && tenant.tokensPerMinute() == 0) {
            return new Verdict(true, null, 0, now);
        }
        Window w = windows.computeIfAbsent(tenant.name(), n -> new Window());
        synchronized (w) {
            w.expire(now);
            if (tenant.requestsPerMinute() > 0 && w.sumRequests + 1 > tenant.requestsPerMinute()) {
                long missing = w.sumRequests + 1 - tenant.requestsPerMinute();
                return new Verdict(false, "rate_limit_requests", w.secondsUntilFreed(now, missing, true), now);
            }
            if (tenant.tokensPerMinute() > 0 && w.sumTokens > 0 && w.sumTokens + tokens > tenant.tokensPerMinute()) {
                // larger than the whole limit: admitted only into an empty window (the "plus one request")
                long missing = tokens >= tenant.tokensPerMinute() ? w.sumTokens
                        : w.sumTokens + tokens - tenant.tokensPerMinute();
                return new Verdict(false, "rate_limit_tokens", w.secondsUntilFreed(now, missing, false), now);
            }
            int slot = w.slot(now);
            w.requests[slot]++;
            w.sumRequests++;
            w.tokens[slot] += tokens;
            w.sumTokens += tokens;
            return new Verdict(true, null, 0, now);
        }
    }

    /**
     * Corrects a reservation made at {@code second} by {@code deltaTokens} (the weighted actual minus the
     * reservation; negative gives tokens back). A reservation whose slot has left the window is no longer counted
     * and is not corrected.
     */
    public void settle(TenantSpec tenant, long second, long deltaTokens) {
        if (tenant.tokensPerMinute() == 0 || deltaTokens == 0) {
            return;
        }
        Window w = windows.get(tenant.name());
        if (w == null) {
            return;
        }
        synchronized (w) {
            long now = Math.floorDiv(nanoTime.getAsLong(), NANOS_PER_SECOND);
            w.expire(now);
            if (second <= now - SLOTS || second > now) {
                return;
            }
            int slot = w.slot(second);
            long corrected = Math.max(0, w.tokens[slot] + deltaTokens);
            w.sumTokens += corrected - w.tokens[slot];
            w.tokens[slot] = corrected;
        }
    }

    /** Weighted tokens counted in the tenant's window now. */
    public long tokensInWindow(TenantSpec tenant) {
        Window w = windows.get(tenant.name());
        if (w == null) {
            return 0;
        }
        synchronized (w) {
            w.expire(Math.floorDiv(nanoTime.getAsLong(), NANOS_PER_SECOND));
            return w.sumTokens;
        }
    }

    /** One tenant's window; guarded by its own monitor. */
    private static final class Window {
        final long[] second = new long[SLOTS];
        final long[] requests = new long[SLOTS];
        final long[] tokens = new long[SLOTS];
        long sumRequests;
        long sumTokens;

        Window() {
            java.util.Arrays.fill(second, Long.MIN_VALUE);
        }

        int slot(long s) {
            return (int) Math.floorMod(s, (long) SLOTS);
        }

        /** Clears the slots older than the window and claims the current second's slot. */
        void expire(long now) {
            for (int i = 0; i < SLOTS; i++) {
                if (second[i] != Long.MIN_VALUE && second[i] <= now - SLOTS) {
                    sumRequests -= requests[i];
                    sumTokens -= tokens[i];
                    requests[i] = 0;
                    tokens[i] = 0;
                    second[i] = Long.MIN_VALUE;
                }
            }
            int current = slot(now);
            if (second[current] != now) {
                second[current] = now;
            }
        }

        /** Seconds until the oldest slots holding at least {@code missing} have left the window (at least 1). */
        long secondsUntilFreed(long now, long missing, boolean countRequests) {
            long freed = 0;
            for (long s = now - SLOTS + 1; s <= now; s++) {
                int i = slot(s);
                if (second[i] != s) {
                    continue;
                }
                freed += countRequests ? requests[i] : tokens[i];
                if (freed >= missing) {
                    return Math.max(1, s + SLOTS - now);
                }
            }
            return SLOTS;
        }
    }
}
