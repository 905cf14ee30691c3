package io.kvroute.bench.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvroute.bench.client.RequestRecord;
import java.util.List;
import org.junit.jupiter.api.Test;

class VariantMetricsTest {

    private static final long MS = 1_000_000L;

    /** A successful request sent at {@code sentMs}, first token after {@code ttftMs}, done after {@code e2eMs}. */
    static RequestRecord ok(int i, String cls, String tag, long sentMs, long ttftMs, long e2eMs, long outTokens,
            long prompt, long cached) {
        return new RequestRecord(i, cls, tag, sentMs * MS, sentMs * MS, sentMs * MS, (sentMs + ttftMs) * MS,
                (sentMs + e2eMs) * MS, (sentMs + e2eMs) * MS, 200, null, outTokens, prompt, cached);
    }

    static RequestRecord failed(int i, String cls) {
        return new RequestRecord(i, cls, "", 0, 0, 1 * MS, -1, -1, 5 * MS, 503, "HTTP 503", 0, 0, 0);
    }

    @Test
    void noRecords_givesNaNsAndZeroCounts() {
        VariantMetrics m = VariantMetrics.of(List.of(), 1.0);

        assertThat(m.all().count()).isZero();
        assertThat(m.all().ttftP50Ms()).isNaN();
        assertThat(m.outputTokPerSec()).isNaN();
        assertThat(m.cacheHitRate()).isNaN();
        assertThat(m.requestsOk()).isZero();
        assertThat(m.classes()).isEmpty();
        assertThat(m.latenessWallMs().isEmpty()).isTrue();
    }

    @Test
    void singleRequest_latencyTpotThroughputAndCacheRate() {
        VariantMetrics m = VariantMetrics.of(List.of(ok(0, "short", "", 0, 100, 1_000, 10, 400, 100)), 1.0);

        assertThat(m.all().ttftP50Ms()).isCloseTo(100, within(1e-9));
        assertThat(m.all().ttftP99Ms()).isCloseTo(100, within(1e-9));
        assertThat(m.all().e2eP95Ms()).isCloseTo(1_000, within(1e-9));
        assertThat(m.all().tpotP50Ms()).isCloseTo(100, within(1e-9)); // (1000 - 100) / (10 - 1)
        assertThat(m.outputTokPerSec()).isCloseTo(10, within(1e-9)); // 10 tokens over 1 s
        assertThat(m.cacheHitRate()).isCloseTo(0.25, within(1e-12));
        assertThat(m.classes()).containsOnlyKeys("short");
    }

    @Test
    void timeScale_multipliesLatenciesAndDividesThroughput() {
        VariantMetrics m = VariantMetrics.of(List.of(ok(0, "", "", 0, 100, 1_000, 10, 0, 0)), 4.0);

        assertThat(m.all().ttftP50Ms()).isCloseTo(400, within(1e-9));
        assertThat(m.all().e2eP50Ms()).isCloseTo(4_000, within(1e-9));
        assertThat(m.outputTokPerSec()).isCloseTo(2.5, within(1e-9));
    }

    @Test
    void failuresAreCountedButExcludedFromLatencyAndCacheRate() {
        VariantMetrics m = VariantMetrics.of(List.of(
                ok(0, "long", "", 0, 300, 600, 4, 1_000, 0),
                ok(1, "short", "", 10, 20, 50, 4, 100, 100),
                failed(2, "short")), 1.0);

        assertThat(m.requestsOk()).isEqualTo(2);
        assertThat(m.requestsFailed()).isEqualTo(1);
        assertThat(m.all().count()).isEqualTo(2);
        assertThat(m.classes().get("short").count()).isEqualTo(1);
        assertThat(m.classes().get("short").ttftP50Ms()).isCloseTo(20, within(1e-9));
        assertThat(m.classes().get("long").ttftP50Ms()).isCloseTo(300, within(1e-9));
        assertThat(m.cacheHitRate()).isCloseTo(100.0 / 1_100, within(1e-12));
        assertThat(m.latenessWallMs().count()).isEqualTo(3);
        assertThat(m.latenessWallMs().max()).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void tagsKeepScheduleOrder() {
        VariantMetrics m = VariantMetrics.of(List.of(
                ok(0, "", "step-2", 500, 10, 20, 2, 0, 0),
                ok(1, "", "step-1", 0, 10, 20, 2, 0, 0),
                ok(2, "", "step-10", 900, 10, 20, 2, 0, 0)), 1.0);

        assertThat(m.tags()).containsOnlyKeys("step-1", "step-2", "step-10");
        assertThat(m.tags().keySet()).containsExactly("step-1", "step-2", "step-10");
        assertThat(m.tags().get("step-1").requestsOk()).isEqualTo(1);
    }

    @Test
    void oneOutputToken_hasNoTpot() {
        VariantMetrics m = VariantMetrics.of(List.of(ok(0, "", "", 0, 10, 10, 1, 0, 0)), 1.0);

        assertThat(m.all().tpotP50Ms()).isNaN();
        assertThat(m.all().ttftP50Ms()).isCloseTo(10, within(1e-9));
    }
}
