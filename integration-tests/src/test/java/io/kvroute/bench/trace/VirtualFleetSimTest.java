package io.kvroute.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.policy.DecisionReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The virtual-time replay on tiny traces: the exact index learns from the simulated engines' KV
 * events and sends a repeated prefix back to its holder, which serves it from cache; runs are
 * deterministic; nothing a request leaves behind is visible before the simulated instant it happens; the
 * saturation-pin arm's engines report their load to the router, whose real queue gate and pin decide.
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

    /**
     * The first 300 requests of the conversation trace at speed 4 on 8 workers (the --quick slice): the pin arm
     * completes every one, and a second run gives the same outcomes and the same decisions.
     * Reads the trace from {@code shared/traces/} beside the checkout.
     */
    @Test
    void pinArm_completesEveryRequestOfATraceSlice_andRepeatsItselfExactly() throws Exception {
        List<TraceRequest> slice = new ArrayList<>();
        for (TraceRequest r : MooncakeTrace.read(PARAMS.trace(), 300)) {
            slice.add(new TraceRequest(r.timestampMs() / 4, r.inputLength(), r.outputLength(), r.hashIds()));
        }
        VirtualFleetSim.Result a = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT_PIN, 8, PARAMS, slice, 42);
        assertThat(a.outcomes()).hasSize(300).allMatch(ArmSummary.Outcome::ok);
        assertThat(a.loadReports()).as("load reports the engines sent").isPositive();
        VirtualFleetSim.Result b = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT_PIN, 8, PARAMS, slice, 42);
        assertThat(b.outcomes()).isEqualTo(a.outcomes());
        assertThat(b.decisionReasons()).isEqualTo(a.decisionReasons());
        assertThat(b.loadReports()).isEqualTo(a.loadReports());
    }

    /**
     * 60 requests sharing a 3-block prefix, each with 3 blocks of its own (1,536 uncached tokens, ~40 ms of
     * prefill): the first alone at 0 (its worker has cached the prefix and published it by 1 s), the other 59
     * from 1 s on, {@code gapMs} apart. An engine stores a prompt's pages only when the request ends, so a
     * burst without that first turn would find no owner of the prefix while its queues fill.
     */
    private static List<TraceRequest> sharedPrefixBurst(long gapMs) {
        List<TraceRequest> out = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            out.add(new TraceRequest(i == 0 ? 0 : 1_000 + (i - 1) * gapMs, 3072, 8,
                    new long[] {0, 1, 2, 100 + 3 * i, 101 + 3 * i, 102 + 3 * i}));
        }
        return out;
    }

    /**
     * 5 ms apart, 2 workers take ~50 requests/s against 200 offered: every queue grows past the limit of 4 while
     * no worker reports an empty one, so the router keeps requests on the prefix's queued owner.
     */
    @Test
    void pinArm_pinsOnAnOverloadedFleet() {
        VirtualFleetSim.Result r = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT_PIN, 2, PARAMS, sharedPrefixBurst(5), 1);
        assertThat(r.outcomes()).allMatch(ArmSummary.Outcome::ok);
        assertThat(r.decisions(DecisionReason.SATURATION_PIN)).as("pin decisions, %s", r.decisionReasons()).isPositive();
    }

    /** 2 s apart, every request ends before the next arrives: no queue, so the gate admits the owner and nothing pins. */
    @Test
    void pinArm_neverPinsOnAnIdleFleet() {
        VirtualFleetSim.Result r = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT_PIN, 2, PARAMS,
                sharedPrefixBurst(2_000), 1);
        assertThat(r.outcomes()).allMatch(ArmSummary.Outcome::ok);
        assertThat(r.loadReports()).as("load reports the engines sent").isPositive();
        assertThat(r.decisions(DecisionReason.SATURATION_PIN)).as("pin decisions, %s", r.decisionReasons()).isZero();
        assertThat(r.decisions(DecisionReason.CACHE_PRIMARY)).as("decisions, %s", r.decisionReasons()).isEqualTo(59);
    }

    /** The arms without load reports are the same runs as before the pin arm: no report is sent. */
    @Test
    void exactArm_sendsNoLoadReports() {
        VirtualFleetSim.Result r = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT, 2, PARAMS, sharedPrefixBurst(5), 1);
        assertThat(r.loadReports()).isZero();
        assertThat(r.decisions(DecisionReason.SATURATION_PIN)).isZero();
    }

    /** load-reports=all: the exact arm's engines report too (as in real time), deterministically. */
    @Test
    void withReportsForEveryArm_theExactArmsEnginesReport_andRunsRepeat() {
        VirtualFleetSim.Result a = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT, 2, PARAMS, sharedPrefixBurst(5), 1, true);
        VirtualFleetSim.Result b = VirtualTimeScenario.simulate(TraceArms.CACHE_EXACT, 2, PARAMS, sharedPrefixBurst(5), 1, true);
        assertThat(a.loadReports()).isPositive().isEqualTo(b.loadReports());
        assertThat(a.outcomes()).isEqualTo(b.outcomes());
        assertThat(VirtualTimeScenario.reportsForEveryArm(java.util.Map.of("load-reports", "all"))).isTrue();
        assertThat(VirtualTimeScenario.reportsForEveryArm(java.util.Map.of())).isFalse();
        assertThatThrownBy(() -> VirtualTimeScenario.reportsForEveryArm(java.util.Map.of("load-reports", "some")))
                .hasMessageContaining("pin or all");
    }
}
