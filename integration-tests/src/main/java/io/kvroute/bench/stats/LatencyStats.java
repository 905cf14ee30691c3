package io.kvroute.bench.stats;

import java.util.Arrays;
import java.util.Collection;

/**
 * Exact order statistics over a small sample (a benchmark run holds at most a few thousand
 * requests, so sorting beats a histogram's bucketing error).
 *
 * <p>Definition: the p-th percentile (0 &lt;= p &lt;= 100) interpolates linearly between the two
 * closest ranks, {@code rank = p/100 * (n - 1)}, the same as numpy's default ("linear") method.
 * An empty sample has every statistic {@code NaN} (written to JSON as {@code null}); a single
 * sample has every percentile equal to that sample. NaN inputs are dropped.
 *
 * <p>Immutable and thread-safe.
 */
public final class LatencyStats {

    private static final LatencyStats EMPTY = new LatencyStats(new double[0]);

    private final double[] sorted;

    private LatencyStats(double[] sorted) {
        this.sorted = sorted;
    }

    /** Stats over {@code values}; NaN values are ignored. The array is copied. */
    public static LatencyStats of(double... values) {
        double[] kept = Arrays.stream(values).filter(v -> !Double.isNaN(v)).toArray();
        if (kept.length == 0) {
            return EMPTY;
        }
        Arrays.sort(kept);
        return new LatencyStats(kept);
    }

    public static LatencyStats of(Collection<Double> values) {
        return of(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    public int count() {
        return sorted.length;
    }

    public boolean isEmpty() {
        return sorted.length == 0;
    }

    /** The p-th percentile by linear interpolation between closest ranks; NaN when empty. */
    public double percentile(double p) {
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in [0, 100]: " + p);
        }
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double rank = p / 100.0 * (sorted.length - 1);
        int lower = (int) Math.floor(rank);
        int upper = Math.min(lower + 1, sorted.length - 1);
        double fraction = rank - lower;
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
    }

    public double p50() {
        return percentile(50);
    }

    public double p95() {
        return percentile(95);
    }

    public double p99() {
        return percentile(99);
    }

    /** Largest sample; NaN when empty. */
    public double max() {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
    }

    /** Arithmetic mean; NaN when empty. */
    public double mean() {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (double v : sorted) {
            sum += v;
        }
        return sum / sorted.length;
    }
}
