package io.kvroute.router.load;

import io.kvroute.protocol.LoadReport;
import static io.kvroute.router.load.LoadFixtures.at;
import static io.kvroute.router.load.LoadFixtures.base;
import static io.kvroute.router.load.LoadFixtures.snapshot;
import static io.kvroute.router.load.LoadFixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

class PressureComparatorsTest {
    private static final long S = 1_000_000_000L;

    private static RankSample withTput(LoadReport r, double tput) {
        return new RankSample(r, 10 * S, tput);
    }

    private static LoadReport ext(int running, int waiting, long uncached) {
        return new LoadReport(0, running, waiting, 0, 0, 0, true, uncached, 0, 0, 0, 0);
    }

    private static List<String> sorted(Comparator<String> c, String... ids) {
        List<String> l = new ArrayList<>(List.of(ids));
        l.sort(c.thenComparing(Comparator.naturalOrder()));
        return l;
    }

    @Test
    void prefill_estimatedQueueMsDecidesFirstWhenEveryoneHasIt() {
        // a: 1000 tokens at 1 tok/us = 1 ms; b: 3000 tokens at 10 tok/us = 0.3 ms; c: 0 waiting = 0 ms.
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(),
                worker("a", 1, withTput(ext(0, 1, 1000), 1.0)),
                worker("b", 1, withTput(ext(0, 9, 3000), 10.0)),
                worker("c", 1, withTput(ext(50, 0, 0), Double.NaN)));
        PrefillPressure p = PrefillPressure.of(snap, List.of("a", "b", "c"), id -> 0);
        assertThat(p.source()).isEqualTo(PressureSource.ESTIMATED_PREFILL_QUEUE_MS);
        assertThat(sorted(p, "a", "b", "c")).containsExactly("c", "b", "a");
    }

    @Test
    void prefill_withoutEstimates_usesUncachedThenWaitingThenRunningThenLocal() {
        Map<String, Integer> local = Map.of("a", 5, "b", 1, "c", 0, "d", 9);
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(),
                worker("a", 1, withTput(ext(1, 2, 100), Double.NaN)),
                worker("b", 1, withTput(ext(1, 2, 100), Double.NaN)),
                worker("c", 1, withTput(ext(3, 2, 100), Double.NaN)),
                worker("d", 1, withTput(ext(0, 1, 100), Double.NaN)),
                worker("e", 1, withTput(ext(0, 0, 50), Double.NaN)));
        PrefillPressure p = PrefillPressure.of(snap, List.of("a", "b", "c", "d", "e"), local::get);
        assertThat(p.source()).isEqualTo(PressureSource.NATIVE_QUEUE_TOKENS);
        // e: least uncached; d: fewer waiting; a,b tie on engine data, b less local; c more running.
        assertThat(sorted(p, "a", "b", "c", "d", "e")).containsExactly("e", "d", "b", "a", "c");
    }

    @Test
    void prefill_oneStaleWorker_switchesTheWholeSetToRouterLocal() {
        ToIntFunction<String> local = Map.of("idle", 7, "busy", 1, "stale", 3)::get;
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(),
                worker("idle", 1, at(base(0, 0, 0, 0, 0), 10 * S)),
                worker("busy", 1, at(base(0, 50, 50, 0, 0), 10 * S)),
                worker("stale", 1, at(base(0, 0, 0, 0, 0), 1 * S)));
        PrefillPressure all = PrefillPressure.of(snap, List.of("idle", "busy", "stale"), local);
        assertThat(all.source()).isEqualTo(PressureSource.ROUTER_LOCAL);
        assertThat(sorted(all, "idle", "busy", "stale")).containsExactly("busy", "stale", "idle");
        PrefillPressure freshOnly = PrefillPressure.of(snap, List.of("idle", "busy"), local);
        assertThat(freshOnly.source()).isEqualTo(PressureSource.NATIVE_QUEUE_TOKENS);
        assertThat(sorted(freshOnly, "idle", "busy")).containsExactly("idle", "busy");
    }

    @Test
    void prefill_routerDispatchesSinceTheReport_countAsWaiting() {
        DispatchLog log = new DispatchLog();
        EngineLoadSnapshot before = snapshot(10 * S, log,
                worker("a", 1, at(base(0, 0, 1, 0, 0), 9 * S)), worker("b", 1, at(base(0, 0, 2, 0, 0), 9 * S)));
        assertThat(sorted(PrefillPressure.of(before, List.of("a", "b"), id -> 0), "a", "b")).containsExactly("a", "b");
        log.recordDispatch("a", 9 * S + 1);
        log.recordDispatch("a", 9 * S + 2);
        EngineLoadSnapshot after = snapshot(10 * S, log,
                worker("a", 1, at(base(0, 0, 1, 0, 0), 9 * S)), worker("b", 1, at(base(0, 0, 2, 0, 0), 9 * S)));
        assertThat(sorted(PrefillPressure.of(after, List.of("a", "b"), id -> 0), "a", "b")).containsExactly("b", "a");
    }

    @Test
    void decode_ordersByWaitingRunningKvFractionTokensThenLocal() {
        Map<String, Integer> local = Map.of("a", 2, "b", 1, "c", 0, "d", 0, "e", 0);
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(),
                worker("a", 1, at(base(0, 4, 0, 500, 1000), 10 * S)),  // 0.5
                worker("b", 1, at(base(0, 4, 0, 500, 1000), 10 * S)),  // same as a, less local
                worker("c", 1, at(base(0, 4, 0, 900, 10000), 10 * S)), // 0.09
                worker("d", 1, at(base(0, 2, 0, 999, 1000), 10 * S)),  // fewer running
                worker("e", 1, at(base(0, 0, 1, 0, 1000), 10 * S)));   // one waiting: last
        DecodePressure p = DecodePressure.of(snap, List.of("a", "b", "c", "d", "e"), local::get);
        assertThat(p.source()).isEqualTo(PressureSource.NATIVE_QUEUE_TOKENS);
        assertThat(sorted(p, "a", "b", "c", "d", "e")).containsExactly("d", "c", "b", "a", "e");
    }

    @Test
    void decode_unknownCapacityFallsThroughToUsedTokens() {
        EngineLoadSnapshot snap = snapshot(10 * S, new DispatchLog(),
                worker("a", 1, at(base(0, 1, 0, 100, 0), 10 * S)),
                worker("b", 1, at(base(0, 1, 0, 50, 1000), 10 * S)));
        assertThat(sorted(DecodePressure.of(snap, List.of("a", "b"), id -> 0), "a", "b")).containsExactly("b", "a");
    }
}
