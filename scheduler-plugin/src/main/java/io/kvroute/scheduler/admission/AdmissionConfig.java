package io.kvroute.scheduler.admission;

/**
 * @param nodeSelfRequestLimit when false, every request is admitted at once (no slot or KV wait)
 * @param maxRequestSlots requests that may be inside the engine at once
 * @param kvCapacityTokens KV tokens that admitted requests may reserve in total
 * @param resourceWaitTimeoutSecs how long a request may wait for a slot and KV; negative = forever
 */
public record AdmissionConfig(boolean nodeSelfRequestLimit, int maxRequestSlots, long kvCapacityTokens,
        double resourceWaitTimeoutSecs) {

    /** LightLLM's default resource wait. */
    public static final double DEFAULT_RESOURCE_WAIT_TIMEOUT_SECS = 20;

    public AdmissionConfig {
        if (maxRequestSlots < 1) {
            throw new IllegalArgumentException("max request slots must be >= 1: " + maxRequestSlots);
        }
        if (kvCapacityTokens < 1) {
            throw new IllegalArgumentException("kv-capacity-tokens must be >= 1: " + kvCapacityTokens);
        }
        if (Double.isNaN(resourceWaitTimeoutSecs)) {
            throw new IllegalArgumentException("resource-wait-timeout-secs must be a number");
        }
    }

    /** Wait limit in nanoseconds, or -1 for forever. */
    public long resourceWaitTimeoutNanos() {
        return resourceWaitTimeoutSecs < 0 ? -1 : (long) (resourceWaitTimeoutSecs * 1e9);
    }
}
