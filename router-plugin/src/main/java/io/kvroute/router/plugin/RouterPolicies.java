package io.kvroute.router.plugin;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.policy.Decision;
import io.kvroute.router.policy.Policies;
import io.kvroute.router.policy.RoutingPolicy;
import io.kvroute.router.policy.StickySessionPolicy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * The router's routing policies, built once from the flags: {@code --policy} ({@code main}), its
 * session-pinning wrapper for requests with a session id ({@code session}), the PD prefill policy
 * ({@code --prefill-policy}, else the main instance, so both share one prefix index) with its own
 * session wrapper, and the PD decode policy ({@code --decode-policy}).
 *
 * <p>{@code cacheAware} lists each cache-aware instance once: at most one exists (the name
 * {@code cache_aware} is built once and shared, also as a sticky policy's fallback), and the
 * composition root binds its prefix indexes to metrics, the KV-event plane and LoRA placement.
 * {@link #recordDispatch} is the dispatch core's {@code onDispatched} hook. Immutable once built;
 * the policies themselves are thread-safe.
 */
record RouterPolicies(
        RoutingPolicy main,
        RoutingPolicy session,
        RoutingPolicy prefill,
        RoutingPolicy prefillSession,
        RoutingPolicy decode,
        List<CacheAwarePolicy> cacheAware) {

    RouterPolicies {
        cacheAware = List.copyOf(cacheAware);
    }

    /** The policies {@code config} names; sessions, stickiness and the prefix indexes' LRU ticks read {@code nanoClock}. */
    static RouterPolicies build(RouterConfig config, LongSupplier nanoClock) {
        Builder builder = new Builder(config, nanoClock);
        RoutingPolicy main = builder.policy(config.routing().policy());
        // PD prefill: --policy unless --prefill-policy names another (the same instance, so one prefix index).
        RoutingPolicy prefill = config.pd().prefillPolicy() == null ? main : builder.policy(config.pd().prefillPolicy());
        RoutingPolicy decode = Policies.createDecode(config.pd().decodePolicy(), config.routing().minLoadChoices());
        double idleSecs = config.session().idleSecs();
        RoutingPolicy session = main instanceof StickySessionPolicy ? main
                : Policies.sticky(main, main.name(), idleSecs, nanoClock);
        RoutingPolicy prefillSession = prefill == main ? session
                : prefill instanceof StickySessionPolicy ? prefill
                : Policies.sticky(prefill, prefill.name(), idleSecs, nanoClock);
        return new RouterPolicies(main, session, prefill, prefillSession, decode,
                List.copyOf(builder.cacheAware.values()));
    }

    /** After a dispatch: records the request's prefix for the chosen worker in every cache-aware index it matched. */
    void recordDispatch(Decision decision) {
        if (decision.cacheAware() == null) {
            return;
        }
        for (CacheAwarePolicy policy : cacheAware) {
            policy.recordDispatch(decision);
        }
    }

    /** Builds policies by name, creating the {@code cache_aware} instance at most once. */
    private static final class Builder {
        private final RouterConfig config;
        private final LongSupplier nanoClock;
        private final Map<String, CacheAwarePolicy> cacheAware = new LinkedHashMap<>();

        Builder(RouterConfig config, LongSupplier nanoClock) {
            this.config = config;
            this.nanoClock = nanoClock;
        }

        /** The prefix indexes' LRU ticks: the router's clock in milliseconds (monotone, unlike the wall clock). */
        private long millis() {
            return nanoClock.getAsLong() / 1_000_000L;
        }

        RoutingPolicy policy(String name) {
            switch (name.toLowerCase(Locale.ROOT)) {
                case "cache_aware":
                    return cacheAware.computeIfAbsent("cache_aware", n -> Policies.cacheAware(config.cacheAwareConfig(),
                            config.routing().minLoadChoices(), ThreadLocalRandom::current, this::millis,
                            config.cacheAware().effectiveMaxIndexBytes()));
                case "sticky":
                    return Policies.sticky(policy(config.session().fallbackPolicy()), "sticky",
                            config.session().idleSecs(), nanoClock);
                default:
                    return Policies.create(name, config.routing().minLoadChoices());
            }
        }
    }
}
