package io.kvroute.bench.scenario;

import io.kvroute.bench.Scenario;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.workload.LongContextWorkload;
import io.kvroute.bench.workload.MultiTurnWorkload;
import io.kvroute.bench.workload.PdWorkload;
import io.kvroute.bench.workload.SaturationWorkload;
import io.kvroute.bench.workload.ShortLongWorkloads;
import io.kvroute.mock.BundledTokenizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The built-in fleet scenarios and their variants. Each variant is a fleet configuration; the first
 * is the baseline. Fleet flags are assembled here only, so the router's and the mock worker's
 * owners can align flag names in one place. A variant whose router flags the router rejects at
 * startup (a policy or flag not in this build) is reported as skipped, so the variant lists may name
 * features that land later.
 */
public final class Scenarios {

    /**
     * Characters per Qwen3 token of {@link io.kvroute.bench.workload.PromptBuilder}'s random lowercase
     * words: the bundled Qwen3 tokenizer gives 2.00-2.08 (2.06 overall) over prompts of 512-128,000
     * characters (random 2-9 letter words split into short sub-words), not the 4 of English text;
     * every fleet runs the real tokenizer at router and workers.
     */
    public static final double CHARS_PER_TOKEN = 2.06;

    /**
     * Simulated ms per wall ms of the scheduler scenarios (long-first-burst, interleaved): real time,
     * because the router's ingress tokenization (about 3.6 us per Qwen3 token on this machine, 786k
     * prompt tokens in the full burst) is wall-clock CPU work that a speedup would inflate.
     */
    static final double SPEEDUP = 1.0;

    /**
     * Simulated ms per wall ms of multi-turn, whose figure of merit (prefix-cache hit rate) does not
     * depend on time.
     */
    static final double ROUTING_SPEEDUP = 4.0;

    /**
     * long-context, pd and saturation run in real time: long-context measures the CPU time of
     * tokenization, which a speedup would multiply into simulated milliseconds; in pd and saturation
     * the router's and workers' real CPU work (tokenizing every prompt, the PD rendezvous) is a large
     * part of each request on a shared 2-core box, and at 4x it, not the simulated engine, saturated.
     */
    static final double REAL_TIME = 1.0;

    /** Per-variant wall-clock bound of a --quick run (3 variants must fit in 60 s with fleet start-up). */
    static final Duration QUICK_TIMEOUT = Duration.ofSeconds(15);

    /** Per-variant wall-clock bound of a full run. */
    static final Duration FULL_TIMEOUT = Duration.ofMinutes(5);

    /**
     * The saturation fleet's drain rate in requests/s (simulated), measured: offered 8-40 req/s in
     * 5 s steps, the 4-worker fleet completed 9.9 req/s without the gate (7.9 with it, 11.4 with
     * gate+floor; docs/benchmarks.md, saturation); steps offer 0.5-2x this.
     */
    static final double SATURATION_CAPACITY_REQ_PER_SEC = 10.0;

    /**
     * multi-turn variants: router {@code --policy} values; extend as policies land. A {@value #VLLM_SUFFIX}
     * suffix runs the same policy over vLLM-API workers ({@code --engine-api vllm}: no /server_info, load from
     * /metrics, chat without router ids, KV events found through templates), in the same run as the SGLang fleet.
     * A {@value #LLAMA3_SUFFIX} suffix runs it over a Llama 3 fleet (router and workers render and tokenize
     * with the bundled Llama 3 tokenizer and chat template, the workers' block hashes seeded per process as
     * vLLM's are, so the router's exact index keys blocks by their tokens: {@code --kv-events-hash tokens}).
     */
    public static final List<String> MULTI_TURN_POLICIES = List.of("round_robin", "random", "power_of_two", "cache_aware",
            "cache_aware@vllm", "cache_aware@llama3");

    /** Variant suffix: the same variant over mock workers speaking vLLM's API. */
    static final String VLLM_SUFFIX = "@vllm";

    /** Variant suffix: the same variant over a Llama 3 fleet, exact index keyed by tokens. */
    static final String LLAMA3_SUFFIX = "@llama3";

    /** saturation variants: router flags per variant (the admission gate and its queue floor). */
    static final Map<String, List<String>> SATURATION_VARIANTS = saturationVariants();

    /**
     * saturation's engine: h100-small's step shape with 400 ms per 1k prefill tokens (16x: the fleet
     * must be prefill-bound at request rates whose router and worker tokenization fit on 2 cores;
     * with h100-small's 25 ms a warm 4-worker fleet outruns the box's CPU), in real time.
     */
    static final TimeModelSpec SATURATION_TIME = new TimeModelSpec(400.0, 9.0, 1.0, REAL_TIME, 1024, 1024);

    /**
     * Worker KV pool of the saturation fleet: room for about five tenants' prefixes per worker
     * ({@code SaturationPinE2ETest}'s 7,000 holds about four), so 12 tenants fit only while each prefix
     * lives on few workers, and diversions evict other tenants' prefixes.
     */
    static final List<String> SATURATION_WORKER_ARGS = List.of("--kv-capacity-tokens", "9000");
    // 7,000 (the e2e test's) thrashed here even at 12 req/s (hit rate 0.2-0.4 in every variant, with
    // 16 output tokens), 9,000 with h100-small's prefill never queued (hit rate 0.95 up to 40 req/s).

    /**
     * saturation: 12 tenants (as in SaturationPinE2ETest), 1,536-token prefix, 256-token question
     * (a hit still costs ~110 ms of prefill, a miss ~720 ms), 8 output tokens; 5 steps of 8 s.
     */
    static final SaturationWorkload.Params SATURATION_FULL = new SaturationWorkload.Params(12, 1_536, 256, 8,
            SATURATION_CAPACITY_REQ_PER_SEC, List.of(0.5, 0.75, 1.0, 1.5, 2.0), 8_000);

    /**
     * saturation --quick: the same prompts, steps 1.0/3.0 x capacity of 1.5 s each (3 variants with a
     * 4-worker fleet each must fit in 60 s; the 3x step is where the floor pins). 2x pinned in most runs but
     * not all once the mock engines ran at their time model: 30 mostly cached requests in 1.5 s over 4 workers
     * queued only in Poisson bursts, and a CI run saw no pin.
     */
    static final SaturationWorkload.Params SATURATION_QUICK = new SaturationWorkload.Params(12, 1_536, 256, 8,
            SATURATION_CAPACITY_REQ_PER_SEC, List.of(1.0, 3.0), 1_500);

    /** saturation warm-up requests (1k-token prompts unrelated to the tenants). */
    static final int SATURATION_WARMUP_REQUESTS = 8;

    /** long-context variants: router flags per variant. */
    static final Map<String, List<String>> LONG_CONTEXT_VARIANTS = longContextVariants();

    /** pd variants: the router's prefill policy. */
    static final List<String> PD_PREFILL_POLICIES = List.of("round_robin", "power_of_two");

    /** Decode segment length of the pd scenario's decode workers: longer answers need continuations. */
    static final int PD_DECODE_SEGMENT_TOKENS = 256;

    private Scenarios() {}

    public static List<Scenario> builtIn() {
        TimeModelSpec time = TimeModelSpec.h100Small(SPEEDUP);
        TimeModelSpec routing = TimeModelSpec.h100Small(ROUTING_SPEEDUP);
        TimeModelSpec realTime = TimeModelSpec.h100Small(REAL_TIME);
        TimeModelSpec longContext = TimeModelSpec.sglangLongContext(REAL_TIME);
        List<String> strategies = QUEUE_STRATEGY_VARIANTS;
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
                scenario("multi-turn", MULTI_TURN_POLICIES, false,
                        (random, quick) -> MultiTurnWorkload.generate(
                                quick ? MultiTurnWorkload.Params.quick() : MultiTurnWorkload.Params.full(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> policyFleet(routing, 4, variant), routing),
                saturation(),
                new ReplicasScenario(routing),
                new FleetWorkloadScenario("long-context", List.copyOf(LONG_CONTEXT_VARIANTS.keySet()), true,
                        (random, quick) -> LongContextWorkload.generate(quick ? LONG_CONTEXT_QUICK : LONG_CONTEXT_FULL,
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> new FleetSpec(1, longContext.workerArgs(),
                                concat(List.of("--policy", "round_robin"), LONG_CONTEXT_VARIANTS.get(variant))),
                        longContext, longContext, FULL_TIMEOUT, Duration.ofSeconds(20))
                        .withWarmup(LONG_CONTEXT_WARMUP_REQUESTS, LONG_CONTEXT_WARMUP_PROMPT_TOKENS),
                new FleetWorkloadScenario("pd", PD_PREFILL_POLICIES, true,
                        (random, quick) -> PdWorkload.generate(quick ? PdWorkload.Params.quick() : PdWorkload.Params.full(),
                                random, CHARS_PER_TOKEN),
                        (variant, quick) -> pdFleet(realTime, variant), realTime, realTime, FULL_TIMEOUT, QUICK_TIMEOUT)
                        .reportingContinuations(),
                new LoraScenario(realTime),
                new NoisyNeighborScenario(),
                harnessSelfTest());
    }

    /**
     * long-context in real time on the sglang-long-context preset: the prompt sizes of SGLang's
     * router-side ingress tokenization measurement (55k, 90k, 125k tokens), 5 samples of each
     * sent one at a time 2.5 s apart on the idle fleet (the 125k prompt's TTFT is about 1.8 s), then
     * 5 rounds 4 s apart in which the three sizes arrive together (1 ms apart, so they queue at the
     * worker's one tokenizer thread or, forwarded, in the engine) while 8 background streams of
     * 3,072 output tokens keep decoding through the loaded phase.
     */
    static final LongContextWorkload.Params LONG_CONTEXT_FULL =
            new LongContextWorkload.Params(List.of(55_000, 90_000, 125_000), 64, 2_500, 8, 512, 3_072, 5, 4_000);

    /** --quick: prompts a quarter as long, 2 samples, 0.8 s / 1.2 s apart, 384-token background answers. */
    static final LongContextWorkload.Params LONG_CONTEXT_QUICK =
            new LongContextWorkload.Params(List.of(13_750, 22_500, 31_250), 32, 800, 8, 256, 384, 2, 1_200);

    /**
     * long-first-burst and interleaved variants: the worker's prefill queue strategy in the
     * {@code lightllm} loop with LightLLM's first-chunk gate, then the same with the gate off
     * ({@code /no-gate}), which shows what the gate hides from the strategies.
     */
    static final List<String> QUEUE_STRATEGY_VARIANTS = List.of("default", "promote_shortest", "hrrn",
            "default/no-gate", "promote_shortest/no-gate", "hrrn/no-gate");

    /**
     * long-context warm-up: 4 prompts of 16k tokens (1 ms apart), so the big-body and input_ids paths of
     * router and worker are compiled before the first variant measures (without it, whichever
     * variant runs first was up to 2x slower on its 31k-token prompt).
     */
    static final int LONG_CONTEXT_WARMUP_REQUESTS = 4;
    static final int LONG_CONTEXT_WARMUP_PROMPT_TOKENS = 16_384;

    private static Map<String, List<String>> longContextVariants() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("forward", List.of());
        m.put("no-forward", List.of("--disable-input-ids-forwarding"));
        return Collections.unmodifiableMap(m);
    }

    private static Map<String, List<String>> saturationVariants() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("no-gate", List.of());
        m.put("gate", List.of("--worker-queue-limit", "4"));
        m.put("gate+floor", List.of("--worker-queue-limit", "4", "--saturation-queue-floor", "1"));
        return Collections.unmodifiableMap(m);
    }

    /**
     * 4 KV-constrained workers behind cache_aware (the gate and the floor are part of its ladder);
     * the variant adds the gate flags, with the values of {@code SaturationPinE2ETest}: limit 4, floor
     * 1, so the floor's saturation test (no worker below 1 waiting) is looser than the gate's own
     * all-workers-at-the-limit tier.
     */
    static Scenario saturation() {
        return new SaturationScenario(SATURATION_VARIANTS, SATURATION_FULL, SATURATION_QUICK, SATURATION_TIME,
                SATURATION_WORKER_ARGS, FULL_TIMEOUT, SATURATION_WARMUP_REQUESTS);
    }

    /**
     * 2 prefill + 2 decode workers; decode workers end a segment after {@link #PD_DECODE_SEGMENT_TOKENS}
     * tokens, so long answers need continuations; the variant is the router's prefill policy.
     */
    static FleetSpec pdFleet(TimeModelSpec time, String prefillPolicy) {
        List<String> decode = concat(time.workerArgs(),
                List.of("--decode-segment-tokens", Integer.toString(PD_DECODE_SEGMENT_TOKENS)));
        return FleetSpec.pd(2, time.workerArgs(), 2, decode,
                List.of("--policy", prefillPolicy, "--prefill-policy", prefillPolicy));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return List.copyOf(all);
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

    /** One worker whose prefill queue strategy (and gate, see {@link #QUEUE_STRATEGY_VARIANTS}) is the variant. */
    static FleetSpec queueStrategyFleet(TimeModelSpec time, String variant) {
        List<String> worker = new ArrayList<>(time.workerArgs());
        boolean noGate = variant.endsWith("/no-gate");
        String strategy = noGate ? variant.substring(0, variant.length() - "/no-gate".length()) : variant;
        worker.addAll(List.of("--prefill-queue-strategy", strategy, "--lightllm-first-chunk-gate", Boolean.toString(!noGate)));
        return new FleetSpec(1, worker, List.of("--policy", "round_robin"));
    }

    /** {@code workers} default-strategy workers; the router's policy is the variant. */
    static FleetSpec policyFleet(TimeModelSpec time, int workers, String policy) {
        if (policy.endsWith(VLLM_SUFFIX)) {
            return new FleetSpec(workers, vllmWorkerArgs(time), List.of("--policy",
                    policy.substring(0, policy.length() - VLLM_SUFFIX.length())));
        }
        if (policy.endsWith(LLAMA3_SUFFIX)) {
            String llama3 = BundledTokenizer.of("llama3").toString();
            return new FleetSpec(workers, 0,
                    concat(time.workerArgs(), List.of("--tokenizer-path", llama3, "--kv-events-hash-seed", "random")),
                    List.of(), List.of("--policy", policy.substring(0, policy.length() - LLAMA3_SUFFIX.length()),
                            "--tokenizer-path", llama3, "--kv-events-hash", "tokens"), false);
        }
        return new FleetSpec(workers, time.workerArgs(), List.of("--policy", policy));
    }

    /** {@code time}'s worker flags plus {@code --engine-api vllm}. */
    static List<String> vllmWorkerArgs(TimeModelSpec time) {
        return concat(time.workerArgs(), List.of("--engine-api", "vllm"));
    }
}
