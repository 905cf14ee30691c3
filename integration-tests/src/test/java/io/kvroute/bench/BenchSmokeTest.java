package io.kvroute.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.bench.fleet.FleetFactories;
import io.kvroute.bench.report.Progress;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CI smoke run of every fleet scenario with {@code --quick}, in process, on the real fleet (router +
 * mock workers + bundled Qwen3 tokenizer, found through the ServiceLoader). It checks that each
 * scenario runs with no failed request and that LightLLM's published claims keep their direction: both
 * new prefill queue strategies cut the short requests' TTFT p50 against {@code default} where the
 * engine sees the queue (the {@code /no-gate} variants: with LightLLM's first-chunk gate modelled the
 * strategies cannot reach the shorts queued in front of the engine, see docs/benchmarks.md), and
 * cache_aware's prefix-cache hit rate beats round_robin's (only once the router has cache_aware).
 * Figures themselves are the benchmark's business (docs/benchmarks.md); this asserts directions
 * that hold with a 2x margin on a loaded 2-core machine. To keep CI short (about 2.5 min for all),
 * scenarios without a direction to check run only one or two variants.
 */
class BenchSmokeTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The seed-002 variants without the gate (where the strategies see the queue). */
    private static final String[] NO_GATE = {"default/no-gate", "promote_shortest/no-gate", "hrrn/no-gate"};

    @TempDir
    Path dir;

    @Test
    void longFirstBurst_bothNewStrategiesCutShortTtftAgainstDefault() throws Exception {
        JsonNode variants = runQuick("long-first-burst", NO_GATE).path("variants");
        assertNoFailures(variants);
        assertShortTtftCut(variants);
    }

    @Test
    void interleaved_bothNewStrategiesCutShortTtftAgainstDefault() throws Exception {
        JsonNode variants = runQuick("interleaved", NO_GATE).path("variants");
        assertNoFailures(variants);
        assertShortTtftCut(variants);
    }

    @Test
    void multiTurn_cacheAwareHitsMoreThanRoundRobin_whenTheRouterHasIt() throws Exception {
        JsonNode variants = runQuick("multi-turn", "round_robin", "cache_aware").path("variants");
        assertNoFailures(variants);
        assertThat(variants.has("round_robin")).isTrue();
        assertThat(variants.path("round_robin").path("requests_ok").asInt()).isPositive();
        if (variants.has("cache_aware")) { // skipped while the router rejects --policy cache_aware
            assertThat(variants.path("cache_aware").path("cache_hit_rate").asDouble())
                    .isGreaterThan(variants.path("round_robin").path("cache_hit_rate").asDouble());
        }
    }

    /**
     * A Llama 3 fleet (router and workers on the bundled Llama 3 template and tokenizer, block hashes seeded
     * per worker process) is routed by the exact index keyed by tokens: it must keep cache hits that
     * round-robin does not, without failures. Keying Llama chats on anything but the engine's own tokens
     * finds no block, and its hit rate falls to round-robin's.
     */
    @Test
    void multiTurn_llama3FleetOnTheExactIndex_hitsMoreThanRoundRobin() throws Exception {
        JsonNode variants = runQuick("multi-turn", "round_robin", "cache_aware@llama3").path("variants");
        assertNoFailures(variants);
        JsonNode llama = variants.path("cache_aware@llama3");
        assertThat(llama.path("requests_ok").asInt()).isPositive();
        assertThat(llama.path("cache_hit_rate").asDouble())
                .isGreaterThan(variants.path("round_robin").path("cache_hit_rate").asDouble() + 0.1);
        assertThat(llama.path("decision_reasons").path("index:exact").asDouble()).as("decisions the exact index answered")
                .isPositive();
    }

    @Test
    void longContext_runsWithoutFailures() throws Exception {
        JsonNode variants = runQuick("long-context", "forward").path("variants");
        assertThat(variants.has("forward")).isTrue();
        assertNoFailures(variants);
    }

    /** Three replicas fed by engine KV events keep more cache hits than three replicas that each guess alone. */
    @Test
    void replicas_exactBeatsApproximateWithoutFailures() throws Exception {
        JsonNode variants = runQuick("replicas", "replicas-approximate", "replicas-exact").path("variants");
        assertNoFailures(variants);
        assertThat(variants.path("replicas-exact").path("cache_hit_rate").asDouble())
                .isGreaterThan(variants.path("replicas-approximate").path("cache_hit_rate").asDouble());
    }

    @Test
    void pd_runsWithContinuationsAndWithoutFailures() throws Exception {
        JsonNode variants = runQuick("pd", "round_robin").path("variants");
        assertNoFailures(variants);
        assertThat(variants.path("round_robin").path("continuations").asLong()).isPositive();
    }

    @Test
    void saturation_runsWithAndWithoutTheGateWithoutFailuresAndTheFloorPins() throws Exception {
        JsonNode variants = runQuick("saturation", "no-gate", "gate+floor").path("variants");
        assertThat(variants.has("no-gate")).isTrue();
        assertNoFailures(variants);
        // the last quick step offers 3x the fleet's estimated capacity: every worker queues, so the
        // floor must pin at least once (direction only; how much it changes the hit rate is for the docs)
        assertThat(variants.path("gate+floor").path("decision_reasons").path("saturation_pin").asDouble())
                .as("gate+floor saturation_pin decisions").isPositive();
        assertThat(variants.path("no-gate").path("decision_reasons").path("saturation_pin").asDouble()).isZero();
    }

    /** The chat prefix cache makes a long conversation's next turn cheaper for the router, end to end. */
    @Test
    void multiTurnOverhead_prefixCacheCutsTheRoutersTimePerTurn() throws Exception {
        JsonNode cases = runQuick("multi-turn-overhead").path("cases");
        double on = Double.NaN;
        double off = Double.NaN;
        for (JsonNode c : cases) {
            if (c.path("name").asText().startsWith("prefix cache on")) {
                on = c.path("median_us").asDouble();
            } else if (c.path("name").asText().startsWith("prefix cache off")) {
                off = c.path("median_us").asDouble();
            }
        }
        assertThat(on).as("cached router time p50 µs").isPositive();
        // quick: ~6k tokens of history, where the uncached router measured ~3x the cached one; 1.5x keeps the
        // direction on a loaded CI box and fails when both routers tokenize the whole chat
        assertThat(on).as("cached vs uncached router time p50 µs").isLessThan(off / 1.5);
    }

    /**
     * tokenize-speed runs every arm of every case (the router's and, when {@code npm ci} has installed
     * tokenizers in integration-tests/node-tokenizers, the Rust one, whose ids the scenario checks equal to
     * the router's by hash); figures at --quick are meaningless, so only their presence is checked.
     */
    @Test
    void tokenizeSpeed_measuresEveryArmOfEveryCase() throws Exception {
        JsonNode cases = runQuick("tokenize-speed").path("cases");
        List<String> names = new ArrayList<>();
        for (JsonNode c : cases) {
            names.add(c.path("name").asText());
            if (!c.path("name").asText().endsWith(": rust") || io.kvroute.bench.tokenize.TokenizeSpeedScenarioAccess.rustInstalled()) {
                assertThat(c.path("median_us").asDouble()).as(c.path("name").asText()).isPositive();
            }
        }
        for (String input : List.of("one message", "8 messages", "24 messages")) {
            assertThat(names).contains(input + ": router first turn", input + ": router-parallel first turn",
                    input + ": djl alone", input + ": rust");
        }
    }

    /**
     * Mooncake's conversation trace through the real router: the exact KV-event index finds earlier turns on
     * the engines (11 of 256 decisions {@code cache_primary} in every run measured; none when its events do
     * not arrive) and so serves more prompt tokens from the engines' caches than round_robin. At --quick
     * those 11 decisions are the whole difference, so the token fractions are noisy in real time: 0.058 vs
     * 0.032 and 0.059 vs 0.035 on an idle box, 0.055 vs 0.044 on a loaded CI box (1.27x, which failed the
     * 1.3x margin this test used to ask for). The decisions prove the index routes; the fractions only need
     * to keep their direction. The deterministic margin is the virtual-time test's below.
     * Reads the trace from {@code shared/traces/} beside the checkout.
     */
    @Test
    void mooncakeTrace_exactIndexServesMoreFromCacheThanRoundRobin() throws Exception {
        JsonNode variants = runQuick("mooncake-trace", "round_robin", "cache_aware/exact").path("variants");
        assertNoFailures(variants);
        JsonNode exact = variants.path("cache_aware/exact");
        assertThat(exact.path("decision_reasons").path("cache_primary").asDouble())
                .as("decisions routed to the worker the exact index found the prefix on").isGreaterThanOrEqualTo(5);
        assertThat(exact.path("cache_hit_rate").asDouble())
                .isGreaterThan(variants.path("round_robin").path("cache_hit_rate").asDouble());
    }

    /**
     * The same trace in virtual time, simulated at 8 and 16 workers; the summary carries the 8-worker fleet, on
     * which every request completes in every arm (the saturation-pin arm's engines publishing load reports), and
     * the exact index, with and without the pin, serves at least 1.5x round_robin's fraction from cache.
     */
    @Test
    void mooncakeTraceVirtualTime_completesEveryRequestAndExactBeatsRoundRobin() throws Exception {
        List<String> arms = List.of("round_robin", "cache_aware/exact", "cache_aware/exact+pin");
        JsonNode variants = runQuick("mooncake-trace-vt", arms.toArray(String[]::new)).path("variants");
        assertNoFailures(variants);
        for (String arm : arms) {
            assertThat(variants.path(arm).path("requests_ok").asInt()).as(arm).isEqualTo(300);
        }
        // deterministic: round_robin 0.036, exact 0.070, exact+pin 0.075 measured
        for (String arm : List.of("cache_aware/exact", "cache_aware/exact+pin")) {
            assertThat(variants.path(arm).path("cache_hit_rate").asDouble()).as(arm)
                    .isGreaterThan(1.5 * variants.path("round_robin").path("cache_hit_rate").asDouble());
        }
    }

    @Test
    void tree_reportsEveryPrefixIndexCase() throws Exception {
        JsonNode cases = runQuick("tree").path("cases");
        assertThat(cases.size()).isGreaterThan(10);
        for (JsonNode c : cases) {
            assertThat(c.path("median_us").asDouble()).as(c.path("name").asText()).isPositive();
        }
    }

    /**
     * The {@code lora} arms run without failures, and adapter-aware placement loads fewer adapters than
     * adapter-blind placement (direction only; the full run's figures are in docs/benchmarks.md).
     */
    @Test
    void lora_adapterAwareLoadsFewerAdaptersThanBlind_withoutFailures() throws Exception {
        JsonNode variants = runQuick("lora", "adapter-blind", "adapter-aware", "adapter-aware+loading").path("variants");
        assertNoFailures(variants);
        JsonNode arms = JSON.readTree(dir.resolve("lora").resolve("lora-arms.json").toFile());
        assertThat(arms.path("adapter-aware").path("adapter_loads").asLong())
                .isLessThan(arms.path("adapter-blind").path("adapter_loads").asLong());
        assertThat(arms.path("adapter-aware").path("decisions_resident").asDouble()).isPositive();
    }

    /**
     * {@code noisy-neighbor} at --quick, one seed, three arms: every tenant's request reaches the router with its
     * API key (an unknown or missing key would be 401 and count as failed), no request fails other than by a
     * router refusal, no stream is cut after its first byte, the isolated arm sheds nothing, full QoS sheds
     * ten times more of the noisy tenant's requests than of the chat tenants', and the weighted fairness
     * sub-scenario serves every tenant. Figures are the full
     * run's business (docs/benchmarks.md).
     */
    @Test
    void noisyNeighbor_runsWithoutFailuresOrCutStreams_andShedsTheNoisyTenantMost() throws Exception {
        Path out = dir.resolve("noisy-neighbor");
        List<String> args = List.of("noisy-neighbor", "--quick", "--out", out.toString(), "--param",
                "arms=isolated,full-qos,fairness");
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(console, true, StandardCharsets.UTF_8);
        int code = BenchMain.run(args.toArray(String[]::new), ScenarioRegistry.defaults(), FleetFactories.load(),
                Progress.silent(), print, print);
        String text = console.toString(StandardCharsets.UTF_8);
        System.out.println(text);
        assertThat(code).as(text).isZero();
        JsonNode arms = JSON.readTree(out.resolve("noisy-neighbor.json").toFile()).path("arms");
        for (String arm : List.of("isolated", "full-qos")) {
            JsonNode run = arms.path(arm).path(0);
            assertThat(run.path("requests").asInt()).as(arm).isPositive();
            assertThat(run.path("failed").asInt()).as(arm + " failed").isZero();
            assertThat(run.path("cut_after_first_byte").asInt()).as(arm + " cut").isZero();
        }
        assertThat(arms.path("isolated").path(0).path("chat_shed").asInt()).as("isolated chat shed").isZero();
        // the noisy tenant's bursts overflow the chat class's queue; the chat tenants, far below their fair share,
        // are served first (the full run sheds a few of theirs too, docs/benchmarks.md)
        JsonNode qos = arms.path("full-qos").path(0);
        assertThat(qos.path("noisy_shed").asInt()).as("noisy shed").isGreaterThan(10 * qos.path("chat_shed").asInt());
        JsonNode fairness = arms.path("fairness").path(0);
        assertThat(fairness.path("failed").asInt()).as("fairness failed").isZero();
        for (String tenant : List.of("fair-w1a", "fair-w1b", "fair-w2", "fair-w4")) {
            assertThat(fairness.path("router_share_" + tenant).asDouble()).as(tenant).isPositive();
        }
    }

    /** Runs {@code --quick} through the CLI and returns the {@code --json} summary. */
    private JsonNode runQuick(String scenario, String... variants) throws Exception {
        Path out = dir.resolve(scenario);
        Path summary = dir.resolve(scenario + ".json");
        List<String> args = new ArrayList<>(List.of(scenario, "--quick", "--out", out.toString(), "--json", summary.toString()));
        for (String v : variants) {
            args.addAll(List.of("--variant", v));
        }
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(console, true, StandardCharsets.UTF_8);
        int code = BenchMain.run(args.toArray(String[]::new), ScenarioRegistry.defaults(), FleetFactories.load(),
                Progress.silent(), print, print);
        String text = console.toString(StandardCharsets.UTF_8);
        System.out.println(text); // the table, for the CI log
        assertThat(code).as(text).isZero();
        return JSON.readTree(summary.toFile());
    }

    private static void assertNoFailures(JsonNode variants) {
        assertThat(variants.size()).isPositive();
        for (Iterator<String> it = variants.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            JsonNode v = variants.path(name);
            assertThat(v.path("requests_failed").asInt()).as(name + " failed requests").isZero();
            assertThat(v.path("requests_ok").asInt()).as(name + " ok requests").isPositive();
        }
    }

    private static void assertShortTtftCut(JsonNode variants) {
        double baseline = shortTtftP50(variants, "default/no-gate");
        assertThat(shortTtftP50(variants, "promote_shortest/no-gate")).isLessThan(baseline);
        assertThat(shortTtftP50(variants, "hrrn/no-gate")).isLessThan(baseline);
    }

    private static double shortTtftP50(JsonNode variants, String variant) {
        JsonNode p50 = variants.path(variant).path("classes").path("short").path("ttft_p50_ms");
        assertThat(p50.isNumber()).as(variant + " short TTFT p50").isTrue();
        return p50.asDouble();
    }
}
