package io.kvroute.bench.stats;

import io.kvroute.bench.client.RequestRecord;

/** Builds request records for report tests (times in milliseconds). */
public final class TestRecords {

    private TestRecords() {}

    public static RequestRecord ok(int index, String cls, long sentMs, long ttftMs, long e2eMs, long outTokens) {
        return VariantMetricsTest.ok(index, cls, "", sentMs, ttftMs, e2eMs, outTokens, 100, 50);
    }

    public static RequestRecord tagged(int index, String tag, long sentMs, long ttftMs, long e2eMs) {
        return VariantMetricsTest.ok(index, "", tag, sentMs, ttftMs, e2eMs, 4, 100, 0);
    }

    public static RequestRecord failed(int index, String cls) {
        return VariantMetricsTest.failed(index, cls);
    }
}
