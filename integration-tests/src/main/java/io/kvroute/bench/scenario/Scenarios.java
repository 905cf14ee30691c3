package io.kvroute.bench.scenario;

import io.kvroute.bench.Scenario;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.workload.LongContextWorkload;
import io.kvroute.bench.workload.MultiTurnWorkload;
import io.kvroute.bench.workload.SaturationWorkload;
import io.kvroute.bench.workload.ShortLongWorkloads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The built-in fleet scenarios and their variants. Each variant is a fleet configuration; the first
 * is the baseline. Fleet flags are assembled here only, so the router's and the mock worker's
 * owners can align flag names in one place.
 */
public final class Scenarios {

    /** Characters per token of the mock worker's stand-in tokenizer on plain ASCII words. */
    public static final double CHARS_PER_TOKEN = 4.0;

    /** Simulated ms per wall ms for every built-in scenario. */
    static final double SPEEDUP = 4.0;

    /** Per-variant wall-clock bound of a --quick run (3 variants must fit in 60 s with fleet start-up). */
    static final Duration QUICK_TIMEOUT = Duration.ofSeconds(15);

    /** Per-variant wall-clock bound of a full run. */
    static final Duration FULL_TIMEOUT = Duration.ofMinutes(5);

    /**
     * Estimated sustainable rate of the saturation fleet (4 workers, seed-002 time model), in
     * simulated requests/s; calibrate once the mock worker runs and update here.
     */
    static final double SATURATION_CAPACITY_REQ_PER_SEC = 40.0;

    private Scenarios() {}

    public static List<Scenario> builtIn() {
        TimeModelSpec time = TimeModelSpec.seed002(SPEEDUP);
        List<String> strategies = List.of("default", "promote_shortest", "hrrn");
        return List.of(
                scenario("long-first-burst", strategies, true,
                        (random, quick) -> ShortLongWorkloads.longFirstBurst(
                                quick ? ShortLongWorkloads.Sizes.burstQuick() : ShortLongWorkloads.Sizes.burstFull(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> queueStrategyFleet(time, variant), time),
                scenario("interleaved", strategies, true,
                        (random, quick) -> ShortLongWorkloads.interleaved(
                                quick ? ShortLongWorkloads.Sizes.interleavedQuick() : ShortLongWorkloads.Sizes.interleavedFull(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> queueStrategyFleet(time, variant), time),
                scenario("multi-turn", List.of("round_robin", "power_of_two", "cache_aware"), false,
                        (random, quick) -> MultiTurnWorkload.generate(
                                quick ? MultiTurnWorkload.Params.quick() : MultiTurnWorkload.Params.full(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> policyFleet(time, 4, variant), time),
                scenario("saturation", List.of("round_robin", "cache_aware"), false,
                        (random, quick) -> SaturationWorkload.generate(quick
                                        ? SaturationWorkload.Params.quick(SATURATION_CAPACITY_REQ_PER_SEC)
                                        : SaturationWorkload.Params.full(SATURATION_CAPACITY_REQ_PER_SEC),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> policyFleet(time, 4, variant), time),
                scenario("long-context", List.of("round_robin", "cache_aware"), true,
                        (random, quick) -> LongContextWorkload.generate(
                                quick ? LongContextWorkload.Params.quick() : LongContextWorkload.Params.full(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> policyFleet(time, 2, variant), time),
                harnessSelfTest());
    }

    /**
     * Measures the harness itself: the long-first-burst schedule (the tightest, 1 ms apart) with
     * real-size prompts against a loopback stand-in that answers at once ({@code instant}) or after
     * 500 ms ({@code slow-500ms}); shows the client's send lateness and its TTFT floor. Needs no fleet.
     */
    static Scenario harnessSelfTest() {
        TimeModelSpec realTime = new TimeModelSpec(0, 0, 0, 1.0, 0, 0);
        return new FleetWorkloadScenario("harness-selftest", List.of("instant", "slow-500ms"), true,
                (random, quick) -> ShortLongWorkloads.longFirstBurst(quick
                                ? new ShortLongWorkloads.Sizes(24, 24, 4_096, 128, 16)
                                : new ShortLongWorkloads.Sizes(48, 48, 16_384, 128, 16), random, CHARS_PER_TOKEN),
                (variant, quick) -> new FleetSpec(1, List.of("--first-token-ms", variant.equals("instant") ? "0" : "500",
                        "--per-token-ms", "1"), List.of()),
                realTime, realTime, FULL_TIMEOUT, QUICK_TIMEOUT, new LoopbackFleetFactory());
    }

    private static Scenario scenario(String name, List<String> variants, boolean hasClasses,
            FleetWorkloadScenario.WorkloadGenerator workload, FleetWorkloadScenario.SpecForVariant specs, TimeModelSpec time) {
        return new FleetWorkloadScenario(name, variants, hasClasses, workload, specs, time, time,
                FULL_TIMEOUT, QUICK_TIMEOUT);
    }

    /** One worker whose prefill queue strategy is the variant; the router just forwards. */
    static FleetSpec queueStrategyFleet(TimeModelSpec time, String strategy) {
        List<String> worker = new ArrayList<>(time.workerArgs());
        worker.addAll(List.of("--prefill-queue-strategy", strategy));
        return new FleetSpec(1, worker, List.of("--policy", "round_robin"));
    }

    /** {@code workers} default-strategy workers; the router's policy is the variant. */
    static FleetSpec policyFleet(TimeModelSpec time, int workers, String policy) {
        return new FleetSpec(workers, time.workerArgs(), List.of("--policy", policy));
    }
}
