package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Why a scraped worker counts as stale and saturated: its last scrape's failure, folded into a bounded
 * set, as {@code kvroute_load_workers_stale_saturated_by_reason{reason}} (one worker in one reason; the
 * reasons sum to {@code kvroute_load_workers_stale_saturated}):
 * <ul>
 * <li>{@code timeout}: no answer within the scrape timeout;
 * <li>{@code connect}: the connection failed (refused, reset, unreachable);
 * <li>{@code http_error}: an answer other than 200;
 * <li>{@code parse_error}: a 200 that gave no reading (not exposition text, a queue gauge missing, a bad
 *     value, too many ranks, a body over the size bound);
 * <li>{@code pending}: the last scrape succeeded, and the next has not completed within the staleness
 *     bound (a slow scrape still in flight, or a tick that has not come).
 * </ul>
 *
 * <p>Threading: {@link #record} runs on HTTP client threads, the gauges on the scraping thread of the
 * meter registry; the per-worker reasons are a concurrent map, the snapshot is the plane's lock-free one.
 */
final class StaleScrapeReasons implements AutoCloseable {
    static final List<String> REASONS = List.of("timeout", "connect", "http_error", "parse_error", "pending");
    private static final String PENDING = "pending";

    private final Supplier<EngineLoadSnapshot> snapshots;
    private final MeterRegistry registry;
    /** The reason of each worker's last failed scrape; absent after a good one. */
    private final Map<String, String> lastFailure = new ConcurrentHashMap<>();
    private final List<Gauge> gauges = new ArrayList<>();

    StaleScrapeReasons(Supplier<EngineLoadSnapshot> snapshots, MeterRegistry registry) {
        this.snapshots = requireNonNull(snapshots, "snapshots");
        this.registry = requireNonNull(registry, "registry");
        for (String reason : REASONS) {
            gauges.add(Gauge.builder("kvroute.load.workers.stale.saturated.by.reason", this, s -> s.count(reason))
                    .tag("reason", reason)
                    .description("Scraped workers whose /metrics reading is stale, counted as saturated, by the "
                            + "failure of their last scrape (pending: it succeeded, the next has not completed)")
                    .strongReference(true).register(registry));
        }
    }

    /** The stale reason a scrape outcome ({@link MetricsScraper#OUTCOMES}) gives, or null for {@code ok}. */
    static String reasonOf(String outcome) {
        return switch (outcome) {
            case "ok" -> null;
            case "timeout" -> "timeout";
            case "connect" -> "connect";
            case "http_status" -> "http_error";
            case "too_large", "malformed", "missing_metric", "bad_value", "too_many_ranks" -> "parse_error";
            default -> throw new IllegalStateException("unknown scrape outcome '" + outcome + "'");
        };
    }

    void record(String workerId, String outcome) {
        String reason = reasonOf(outcome);
        if (reason == null) {
            lastFailure.remove(workerId);
        } else {
            lastFailure.put(workerId, reason);
        }
    }

    void forget(String workerId) {
        lastFailure.remove(workerId);
    }

    private double count(String reason) {
        EngineLoadSnapshot snap = snapshots.get();
        int n = 0;
        for (WorkerState w : snap.table().workers()) {
            if (snap.countsAsSaturated(w.workerId())
                    && reason.equals(lastFailure.getOrDefault(w.workerId(), PENDING))) {
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        gauges.forEach(registry::remove);
    }
}
