package io.kvroute.router.tenant;

/**
 * How one priority class shares the router-side capacity (tokens in flight).
 *
 * <p>A class's reservation is {@code min(capacity, max(reservedFloorTokens, ceil(reservedShare * capacity)))};
 * the unused part of every higher class's reservation is held back from it (SMG
 * {@code model_gateway/src/middleware/scheduler/slots.rs}, in tokens instead of slots).
 *
 * @param reservedFloorTokens tokens in flight reserved for the class whatever the fleet size
 * @param reservedShare share (0..1) of the fleet's token capacity reserved for the class
 * @param queueCap requests of the class that may wait at the router; one more is refused (429)
 * @param queueTimeoutMillis the longest a request of the class waits before it is refused
 * @param starvationMillis a head waiting this long may use capacity held back for higher classes
 * @param canPreempt whether the class may take the place of a lower-class request that has sent nothing
 */
public record ClassSpec(long reservedFloorTokens, double reservedShare, int queueCap, long queueTimeoutMillis,
        long starvationMillis, boolean canPreempt) {

    /** Bounds what a tenants file may set. */
    static final long MAX_TIMEOUT_MILLIS = 3_600_000;
    static final int MAX_QUEUE_CAP = 1_000_000;

    public ClassSpec {
        if (reservedFloorTokens < 0) {
            throw new IllegalArgumentException("reserved_floor_tokens must be >= 0 (got " + reservedFloorTokens + ")");
        }
        if (!(reservedShare >= 0 && reservedShare <= 1)) {
            throw new IllegalArgumentException("reserved_share must be within 0..1 (got " + reservedShare + ")");
        }
        if (queueCap < 0 || queueCap > MAX_QUEUE_CAP) {
            throw new IllegalArgumentException("queue_cap must be within 0.." + MAX_QUEUE_CAP + " (got " + queueCap + ")");
        }
        if (queueTimeoutMillis < 1 || queueTimeoutMillis > MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("queue_timeout_ms must be within 1.." + MAX_TIMEOUT_MILLIS
                    + " (got " + queueTimeoutMillis + ")");
        }
        if (starvationMillis < 1 || starvationMillis > MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("starvation_ms must be within 1.." + MAX_TIMEOUT_MILLIS
                    + " (got " + starvationMillis + ")");
        }
    }

    /** The defaults, after SMG's {@code ClassConfig::default_for} with slots turned into shares of token capacity. */
    public static ClassSpec defaultFor(PriorityClass c) {
        switch (c) {
            case SYSTEM:
                return new ClassSpec(0, 0.05, 64, 30_000, 5_000, true);
            case INTERACTIVE:
                return new ClassSpec(0, 0.25, 256, 30_000, 5_000, true);
            case DEFAULT:
                return new ClassSpec(0, 0.10, 512, 60_000, 30_000, false);
            case BATCH:
                return new ClassSpec(0, 0.0, 1024, 300_000, 120_000, false);
            default:
                throw new IllegalStateException("unknown class " + c);
        }
    }

    /** The reservation in tokens for a fleet of {@code capacityTokens}. */
    long reservedTokens(long capacityTokens) {
        long share = (long) Math.ceil(reservedShare * capacityTokens);
        return Math.min(capacityTokens, Math.max(reservedFloorTokens, share));
    }
}
