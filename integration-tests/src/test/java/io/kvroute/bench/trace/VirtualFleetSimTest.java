package io.kvroute.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The virtual-time replay on tiny traces: the exact index learns from the simulated engines' KV
 * events and sends a repeated prefix back to its holder, which serves it from cache; runs are
 * deterministic; nothing a request leaves behind is visible before the simulated instant it happens.
 */
class VirtualFleetSimTest {

    private static final TraceParams PARAMS = TraceParams.of(Map.of(), false, 0, 1, 8, 16);

    /** Three conversations of 4 blocks, then each one's next turn (same 4 blocks + 1) 10 s later. */
    private static List<TraceRequest> turns() {
        return List.of(
                new TraceRequest(0, 2048, 4, new long[] {0, 1, 2, 3}),
                new TraceRequest(0, 2048, 4, new long[] {0, 11, 12, 13}),
                new TraceRequest(0, 2048, 4, new long[] {0, 21, 22, 23}),
                new TraceRequest(10_000, 2560, 4, new long[] {0, 1, 2, 3, 4}),
                new TraceRequest(10_000, 2560, 4, new long[] {0, 11, 12, 13, 14}),
                new TraceRequest(10_000, 2560, 4, new long[] {0, 21, 22, 23, 24}));
    }

    @Test
    void exactIndex_sendsEachNextTurnToItsHolder_whichServesThePrefixFromCache() {
        VirtualFleetSim.Result exact = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT, 8, PARAMS, turns(), 1);
        for (int i = 3; i < 6; i++) {
            ArmSummary.Outcome o = exact.outcomes().get(i);
            assertThat(o.ok()).isTrue();
            // 4 blocks of 512 cached (a 16-token page short at most: the engine never caches a prompt's last token)
            assertThat(o.cachedTokens()).as("turn 2 of conversation %d", i - 3).isGreaterThanOrEqualTo(2048 - 16);
        }
        VirtualFleetSim.Result roundRobin = VirtualTimeScenario.simulate(TraceArms.ROUND_ROBIN, 8, PARAMS, turns(), 1);
        for (int i = 3; i < 6; i++) {
            assertThat(roundRobin.outcomes().get(i).cachedTokens()).as("round_robin moves turn 2 elsewhere").isZero();
        }
    }

    @Test
    void sameTraceAndSeed_giveTheSameOutcomes() {
        VirtualFleetSim.Result a = VirtualTimeScenario.simulate(TraceArms.POWER_OF_TWO, 8, PARAMS, turns(), 7);
        VirtualFleetSim.Result b = VirtualTimeScenario.simulate(TraceArms.POWER_OF_TWO, 8, PARAMS, turns(), 7);
        assertThat(a.outcomes()).isEqualTo(b.outcomes());
    }

    /** Requests are read in order as they arrive, so a trace that goes back in time is refused, not reordered. */
    @Test
    void traceThatGoesBackInTime_isRefused() {
        List<TraceRequest> trace = List.of(
                new TraceRequest(10, 1024, 1, new long[] {0, 1}),
                new TraceRequest(5, 1024, 1, new long[] {2, 3}));
        assertThatThrownBy(() -> VirtualTimeScenario.simulate(TraceArms.ROUND_ROBIN, 8, PARAMS, trace, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("request 1");
    }

    /**
     * A one-token request's prefill step runs from 0 to about 27 ms and stores its prompt's pages when
     * it ends; the same prompt arrives at 10 ms. The engine computes that step (and so calls its KV-event
     * sink) at 0, but the router may learn the pages only at the step's end: at 10 ms the exact index
     * must still be empty, so the second request goes elsewhere and finds nothing cached. A simulator
     * applying events as the engine computes them would send it to the holder for a hit.
     */
    @Test
    void kvEvents_becomeVisibleOnlyAtTheirSimulatedInstant() {
        List<TraceRequest> trace = List.of(
                new TraceRequest(0, 1024, 1, new long[] {0, 1}),
                new TraceRequest(10, 1024, 1, new long[] {0, 1}));
        VirtualFleetSim.Result r = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT, 8, PARAMS, trace, 1);
        assertThat(r.outcomes().get(0).ttftMs()).as("the first request's prefill outlasts the second's arrival")
                .isGreaterThan(10);
        assertThat(r.outcomes().get(1).cachedTokens()).isZero();
    }
}
