package io.kvroute.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvroute.bench.scenario.LoopbackOpenAiServer;
import io.kvroute.bench.fleet.Fleet;
import io.kvroute.bench.fleet.FleetFactory;
import io.kvroute.bench.fleet.FleetSpec;
import io.kvroute.bench.report.Progress;
import io.kvroute.bench.scenario.FleetWorkloadScenario;
import io.kvroute.bench.scenario.TimeModelSpec;
import io.kvroute.bench.workload.ShortLongWorkloads;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI end to end over real HTTP against a fake OpenAI server standing in for the fleet. */
class BenchMainTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<FleetSpec> startedSpecs = new CopyOnWriteArrayList<>();

    /** Each fleet is one fake server answering as both router and worker. */
    private final FleetFactory fakeFleets = spec -> {
        startedSpecs.add(spec);
        LoopbackOpenAiServer server = new LoopbackOpenAiServer(5, 1, 200);
        return new Fleet() {
            @Override
            public String routerUrl() {
                return server.baseUrl();
            }

            @Override
            public List<String> workerUrls() {
                return List.of(server.baseUrl());
            }

            @Override
            public void close() throws Exception {
                server.close();
            }
        };
    };

    private static Scenario miniBurst() {
        TimeModelSpec time = TimeModelSpec.h100Small(2.0);
        return new FleetWorkloadScenario("mini-burst", List.of("default", "promote_shortest", "hrrn"), true,
                (random, quick) -> ShortLongWorkloads.longFirstBurst(new ShortLongWorkloads.Sizes(4, 4, 64, 8, 3), random, 4.0),
                (variant, quick) -> new FleetSpec(1, List.of("--prefill-queue-strategy", variant), List.of()),
                time, time, Duration.ofSeconds(20), Duration.ofSeconds(10));
    }

    private int run(String... args) {
        return BenchMain.run(args, new ScenarioRegistry(List.of(miniBurst())), fakeFleets, Progress.silent(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void unknownScenario_exits2AndListsScenarios() {
        assertThat(run("nope")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown scenario 'nope'").contains("mini-burst");
        assertThat(startedSpecs).isEmpty();
    }

    @Test
    void unknownVariant_exits2AndListsVariants() {
        assertThat(run("mini-burst", "--variant", "fifo")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("fifo").contains("promote_shortest");
    }

    @Test
    void defaultRegistry_listsTheBuiltInScenarios() {
        assertThat(ScenarioRegistry.defaults().names())
                .contains("long-first-burst", "interleaved", "multi-turn", "saturation", "long-context", "pd", "harness-selftest");
    }

    @Test
    void run_writesEveryOutputForTheSelectedVariantsInScenarioOrder(@TempDir Path dir) throws Exception {
        Path summary = dir.resolve("summary.json");
        int code = run("mini-burst", "--quick", "--seed", "3", "--variant", "hrrn", "--variant", "default",
                "--out", dir.resolve("out").toString(), "--json", summary.toString());

        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(startedSpecs).extracting(s -> s.workerArgs().get(1)).containsExactly("default", "hrrn");
        JsonNode root = JSON.readTree(summary.toFile());
        assertThat(root.path("scenario").asText()).isEqualTo("mini-burst");
        assertThat(root.path("quick").asBoolean()).isTrue();
        assertThat(root.path("time_scale").asDouble()).isEqualTo(2.0);
        assertThat(root.path("variants").fieldNames()).toIterable().containsExactly("default", "hrrn");
        JsonNode hrrn = root.path("variants").path("hrrn");
        assertThat(hrrn.path("requests_ok").asInt()).isEqualTo(8);
        assertThat(hrrn.path("requests_failed").asInt()).isZero();
        assertThat(hrrn.path("classes").path("short").path("count").asInt()).isEqualTo(4);
        assertThat(hrrn.path("classes").path("long").path("ttft_p50_ms").isNumber()).isTrue();
        assertThat(hrrn.path("cache_hit_rate").asDouble()).isEqualTo(0.25);
        assertThat(hrrn.path("decision_reasons").path("load_balance").asDouble()).isEqualTo(5.0);
        assertThat(hrrn.path("decision_reasons").path("cache_hit").asDouble()).isEqualTo(7.0);
        assertThat(dir.resolve("out/results.json")).isNotEmptyFile();
        assertThat(dir.resolve("out/ttft.png")).isNotEmptyFile();
        String report = Files.readString(dir.resolve("out/report.md"));
        assertThat(report).contains("mini-burst (--quick)").contains("--seed 3").contains("Time scale: 2")
                .contains("default (baseline)").contains("(--quick: scaled-down");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("| hrrn |").contains("wrote ");
    }

    @Test
    void variantFailingMidway_reportsTheCompletedOnesAndExits1(@TempDir Path dir) throws Exception {
        FleetFactory failsForHrrn = spec -> {
            if (spec.workerArgs().contains("hrrn")) {
                throw new IllegalStateException("worker crashed");
            }
            return fakeFleets.start(spec);
        };
        Path summary = dir.resolve("s.json");
        int code = BenchMain.run(new String[] {"mini-burst", "--out", dir.toString(), "--json", summary.toString()},
                new ScenarioRegistry(List.of(miniBurst())), failsForHrrn, Progress.silent(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("hrrn").contains("worker crashed");
        assertThat(JSON.readTree(summary.toFile()).path("variants").fieldNames()).toIterable()
                .containsExactly("default", "promote_shortest");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("partial results");
    }

    @Test
    void variantTheRouterRejects_isSkippedAndTheOthersStillRunAndExit0(@TempDir Path dir) throws Exception {
        FleetFactory rejectsHrrn = spec -> {
            if (spec.workerArgs().contains("hrrn")) {
                throw new io.kvroute.bench.fleet.RouterRejectedException("router rejected [--policy, hrrn]", null);
            }
            return fakeFleets.start(spec);
        };
        Path summary = dir.resolve("s.json");
        int code = BenchMain.run(new String[] {"mini-burst", "--out", dir.toString(), "--json", summary.toString()},
                new ScenarioRegistry(List.of(miniBurst())), rejectsHrrn, Progress.silent(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("variant hrrn of mini-burst skipped");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("skipped: hrrn");
        assertThat(JSON.readTree(summary.toFile()).path("variants").fieldNames()).toIterable()
                .containsExactly("default", "promote_shortest");
    }

    @Test
    void fleetThatFailsToStart_exits1() {
        FleetFactory broken = spec -> {
            throw new IllegalStateException("no router");
        };
        int code = BenchMain.run(new String[] {"mini-burst", "--quick", "--out", "target/never"},
                new ScenarioRegistry(List.of(miniBurst())), broken, Progress.silent(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no router");
    }
}
