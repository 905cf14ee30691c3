package io.kvroute.router.tenant;

import java.util.Objects;

/**
 * One tenant as the tenants file declares it.
 *
 * @param name the tenant's name (metric label, access log, fair-share key)
 * @param weight its share of service relative to the other tenants of a class (VTC weight), &gt; 0
 * @param maxClass the highest class its requests may use
 * @param requestsPerMinute its request rate limit, 0 for none
 * @param tokensPerMinute its token rate limit (input plus output tokens), 0 for none
 */
public record TenantSpec(String name, double weight, PriorityClass maxClass, long requestsPerMinute,
        long tokensPerMinute) {

    public TenantSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(maxClass, "maxClass");
        if (!(weight > 0) || Double.isInfinite(weight)) {
            throw new IllegalArgumentException("weight must be positive and finite (got " + weight + ")");
        }
        if (requestsPerMinute < 0 || tokensPerMinute < 0) {
            throw new IllegalArgumentException("rate limits must be >= 0");
        }
    }

    /** A tenant with weight 1, class ceiling {@code default} and no rate limits. */
    public static TenantSpec plain(String name) {
        return new TenantSpec(name, 1.0, PriorityClass.DEFAULT, 0, 0);
    }
}
