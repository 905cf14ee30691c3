package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Load-plane settings.
 *
 * @param freshnessWindow a rank's report counts as fresh for this long after arrival (SGLang: 5 s)
 * @param pollTimeout longest the load-plane thread waits in poll; bounds how late an
 *        {@code addWorker}/{@code removeWorker} takes effect (1..50 ms)
 * @param rcvHwm ZeroMQ receive high-water mark per SUB socket (messages)
 * @param dispatchLogCapacity dispatch times kept per worker (see {@link DispatchLog})
 * @param batchWindow after handling a batch, the thread sleeps this long so that reports from many
 *        workers are handled and published as one table version (0 = none); bounds the extra
 *        report latency it adds
 * @param resubscribeAfter a worker's SUB socket is replaced after this much silence, on the real
 *        monotonic clock (transport upkeep, not policy; see {@code LoadPlane}); at least 100 ms
 * @param metricsStaleness a scraped ({@code /metrics}) rank counts as fresh for this long after its
 *        scrape; past it the worker counts as saturated (see {@link EngineLoadSnapshot#countsAsSaturated})
 */
public record LoadPlaneConfig(Duration freshnessWindow, Duration pollTimeout, int rcvHwm, int dispatchLogCapacity,
                              Duration batchWindow, Duration resubscribeAfter, Duration metricsStaleness) {
    /** Default staleness bound of a scraped reading: five scrapes at the default 200 ms interval. */
    public static final Duration DEFAULT_METRICS_STALENESS = Duration.ofSeconds(1);

    public LoadPlaneConfig(Duration freshnessWindow, Duration pollTimeout, int rcvHwm, int dispatchLogCapacity,
            Duration batchWindow, Duration resubscribeAfter) {
        this(freshnessWindow, pollTimeout, rcvHwm, dispatchLogCapacity, batchWindow, resubscribeAfter,
                DEFAULT_METRICS_STALENESS);
    }

    public LoadPlaneConfig {
        requireNonNull(metricsStaleness, "metricsStaleness");
        if (metricsStaleness.isNegative() || metricsStaleness.isZero()) {
            throw new IllegalArgumentException("metrics staleness must be positive, got " + metricsStaleness);
        }
        requireNonNull(freshnessWindow, "freshnessWindow");
        requireNonNull(pollTimeout, "pollTimeout");
        requireNonNull(batchWindow, "batchWindow");
        requireNonNull(resubscribeAfter, "resubscribeAfter");
        if (resubscribeAfter.toMillis() < 100) {
            throw new IllegalArgumentException("load resubscribe-after must be at least 100 ms, got " + resubscribeAfter);
        }
        if (freshnessWindow.isNegative() || freshnessWindow.isZero()) {
            throw new IllegalArgumentException("load freshness window must be positive, got " + freshnessWindow);
        }
        if (pollTimeout.toMillis() < 1 || pollTimeout.toMillis() > 50) {
            throw new IllegalArgumentException("load poll timeout must be within 1..50 ms, got " + pollTimeout);
        }
        if (rcvHwm < 1) {
            throw new IllegalArgumentException("load receive HWM must be at least 1, got " + rcvHwm);
        }
        if (dispatchLogCapacity < 1) {
            throw new IllegalArgumentException("dispatch log capacity must be at least 1, got " + dispatchLogCapacity);
        }
        if (batchWindow.isNegative() || batchWindow.toMillis() > 50) {
            throw new IllegalArgumentException("load batch window must be within 0..50 ms, got " + batchWindow);
        }
    }

    public static LoadPlaneConfig defaults() {
        return new LoadPlaneConfig(Duration.ofSeconds(5), Duration.ofMillis(20), 1000, DispatchLog.DEFAULT_CAPACITY,
                Duration.ofMillis(5), Duration.ofSeconds(3));
    }

    public LoadPlaneConfig withFreshnessWindow(Duration d) {
        return new LoadPlaneConfig(d, pollTimeout, rcvHwm, dispatchLogCapacity, batchWindow, resubscribeAfter, metricsStaleness);
    }

    public LoadPlaneConfig withPollTimeout(Duration d) {
        return new LoadPlaneConfig(freshnessWindow, d, rcvHwm, dispatchLogCapacity, batchWindow, resubscribeAfter, metricsStaleness);
    }

    public LoadPlaneConfig withResubscribeAfter(Duration d) {
        return new LoadPlaneConfig(freshnessWindow, pollTimeout, rcvHwm, dispatchLogCapacity, batchWindow, d, metricsStaleness);
    }

    public LoadPlaneConfig withBatchWindow(Duration d) {
        return new LoadPlaneConfig(freshnessWindow, pollTimeout, rcvHwm, dispatchLogCapacity, d, resubscribeAfter, metricsStaleness);
    }

    public LoadPlaneConfig withMetricsStaleness(Duration d) {
        return new LoadPlaneConfig(freshnessWindow, pollTimeout, rcvHwm, dispatchLogCapacity, batchWindow,
                resubscribeAfter, d);
    }
}
