package io.kvroute.bench.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LatencyStatsTest {

    @Test
    void empty_everyStatisticIsNaN() {
        LatencyStats s = LatencyStats.of();

        assertThat(s.isEmpty()).isTrue();
        assertThat(s.count()).isZero();
        assertThat(s.p50()).isNaN();
        assertThat(s.p99()).isNaN();
        assertThat(s.max()).isNaN();
        assertThat(s.mean()).isNaN();
    }

    @Test
    void onlyNaNs_isEmpty() {
        assertThat(LatencyStats.of(Double.NaN, Double.NaN).isEmpty()).isTrue();
    }

    @Test
    void singleSample_isEveryPercentile() {
        LatencyStats s = LatencyStats.of(7.5);

        assertThat(s.percentile(0)).isEqualTo(7.5);
        assertThat(s.p50()).isEqualTo(7.5);
        assertThat(s.p95()).isEqualTo(7.5);
        assertThat(s.percentile(100)).isEqualTo(7.5);
        assertThat(s.count()).isEqualTo(1);
    }

    @Test
    void interpolatesLinearlyBetweenClosestRanks() {
        LatencyStats s = LatencyStats.of(5, 1, 4, 2, 3);

        assertThat(s.p50()).isEqualTo(3.0);
        assertThat(s.percentile(25)).isEqualTo(2.0);
        assertThat(s.p95()).isCloseTo(4.8, within(1e-12)); // rank 3.8
        assertThat(s.percentile(0)).isEqualTo(1.0);
        assertThat(s.percentile(100)).isEqualTo(5.0);
        assertThat(s.mean()).isEqualTo(3.0);
    }

    @Test
    void twoSamples_medianIsTheirMidpoint() {
        assertThat(LatencyStats.of(10, 20).p50()).isEqualTo(15.0);
    }

    @Test
    void nanSamplesAreIgnored() {
        LatencyStats s = LatencyStats.of(1, Double.NaN, 3);

        assertThat(s.count()).isEqualTo(2);
        assertThat(s.p50()).isEqualTo(2.0);
    }

    @Test
    void matchesNaiveModelOnRandomSamples() {
        SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            double[] values = random.doubles(1 + random.nextInt(60), 0, 1000).toArray();
            LatencyStats s = LatencyStats.of(values);
            double[] sorted = values.clone();
            Arrays.sort(sorted);
            for (double p : new double[] {0, 1, 50, 95, 99, 100}) {
                assertThat(s.percentile(p)).isCloseTo(naive(sorted, p), within(1e-9));
                assertThat(s.percentile(p)).isBetween(sorted[0], sorted[sorted.length - 1]);
            }
        }
    }

    /** numpy "linear": value at fractional index p/100 * (n-1). */
    private static double naive(double[] sorted, double p) {
        double index = p / 100 * (sorted.length - 1);
        int below = (int) index;
        if (below == sorted.length - 1) {
            return sorted[below];
        }
        return sorted[below] * (1 - (index - below)) + sorted[below + 1] * (index - below);
    }

    @Test
    void percentileOutsideRange_isRejected() {
        assertThatThrownBy(() -> LatencyStats.of(1).percentile(101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LatencyStats.of(1).percentile(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}
