package io.kvroute.router.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Per-request meters looked up by their tag values instead of rebuilt. Micrometer's
 * {@code Builder.register} allocates a builder, a tag list and a {@code Meter.Id} and hashes them on
 * every call; on the proxy hot path that was about a tenth of the router's CPU (JFR profile,
 * docs/benchmarks.md "Where the time went").
 * The router never removes counters or timers (only worker gauges), so a meter found once stays the
 * registered one, and the memo holds no more series than the registry already does.
 *
 * @param <K> the key: the tag value itself, or a small record of several
 * @param <M> the meter type
 */
final class MeterMemo<K, M> {
    private final ConcurrentHashMap<K, M> meters = new ConcurrentHashMap<>();
    private final Function<K, M> register;

    MeterMemo(Function<K, M> register) {
        this.register = register;
    }

    M get(K key) {
        M meter = meters.get(key);
        return meter != null ? meter : meters.computeIfAbsent(key, register);
    }

    /** Two tag values as one key. */
    record Pair(String first, String second) {}

    /** Three tag values as one key. */
    record Triple(String first, String second, String third) {}
}
