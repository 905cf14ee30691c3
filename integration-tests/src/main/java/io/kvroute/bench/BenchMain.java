package io.kvroute.bench;

import io.kvroute.bench.fleet.FleetFactories;
import io.kvroute.bench.fleet.FleetFactory;
import io.kvroute.bench.report.Progress;
import io.kvroute.bench.report.Report;
import io.kvroute.bench.report.RunInfo;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Entry point of kvroute-bench.jar: runs one scenario's variants in order (the first selected
 * variant is the baseline), then prints a table and writes results.json, report.md, PNG plots and
 * optionally the {@code --json} summary. A variant the build cannot run ({@link VariantSkippedException}) is
 * reported as skipped and the others still run. Exit codes: 0 ok, 1 a variant failed to run (the variants
 * completed before it are still reported; later ones are not run), 2 usage error (unknown scenario or
 * variant). See docs/benchmark-harness.md.
 */
@Command(name = "kvroute-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs a kvroute benchmark scenario against an in-process router and mock GPU workers.")
public final class BenchMain implements Callable<Integer> {

    static final int EXIT_VARIANT_FAILED = 1;
    static final int EXIT_USAGE = 2;

    @Parameters(index = "0", paramLabel = "SCENARIO", description = "Scenario name; an unknown name lists them.")
    String scenarioName;

    @Option(names = "--variant", paramLabel = "V", description = "Run only these variants (repeatable), in scenario order.")
    List<String> variantFilter = new ArrayList<>();

    @Option(names = "--seed", paramLabel = "N", description = "Workload seed (default: ${DEFAULT-VALUE}).")
    long seed = 42;

    @Option(names = "--out", paramLabel = "DIR", description = "Output directory (default: bench-out/<scenario>).")
    Path outDir;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the machine-readable summary here.")
    Path jsonFile;

    @Option(names = "--quick", description = "Scaled-down run that finishes within 60 s on 2 cores.")
    boolean quick;

    @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A scenario parameter (repeatable), e.g. "
            + "--param trace=PATH for mooncake-trace; the scenario's docs list its keys.")
    Map<String, String> params = new LinkedHashMap<>();

    private final ScenarioRegistry registry;
    private final FleetFactory fleets;
    private final Progress.Factory progress;
    private final PrintStream out;
    private final PrintStream err;
    private final String commandLine;

    BenchMain(ScenarioRegistry registry, FleetFactory fleets, Progress.Factory progress, PrintStream out, PrintStream err,
            String commandLine) {
        this.registry = registry;
        this.fleets = fleets;
        this.progress = progress;
        this.out = out;
        this.err = err;
        this.commandLine = commandLine;
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(run(args, ScenarioRegistry.defaults(), FleetFactories.load(), Progress.auto(), System.out, System.err));
    }

    /** Parses {@code args}, runs and returns the exit code (for tests and embedding). */
    public static int run(String[] args, ScenarioRegistry registry, FleetFactory fleets, Progress.Factory progress,
            PrintStream out, PrintStream err) {
        String commandLine = "java -jar kvroute-bench.jar " + String.join(" ", args);
        CommandLine cli = new CommandLine(new BenchMain(registry, fleets, progress, out, err, commandLine));
        cli.setOut(new java.io.PrintWriter(out, true));
        cli.setErr(new java.io.PrintWriter(err, true));
        return cli.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        Scenario scenario = registry.find(scenarioName).orElse(null);
        if (scenario == null) {
            err.println("unknown scenario '" + scenarioName + "'; known scenarios: " + String.join(", ", registry.names()));
            return EXIT_USAGE;
        }
        List<String> variants = new ArrayList<>();
        for (String v : variantFilter) {
            if (!scenario.variants().contains(v)) {
                err.println("unknown variant '" + v + "' of " + scenario.name() + "; known variants: "
                        + String.join(", ", scenario.variants()));
                return EXIT_USAGE;
            }
        }
        for (String v : scenario.variants()) {
            if (variantFilter.isEmpty() || variantFilter.contains(v)) {
                variants.add(v);
            }
        }
        Path dir = outDir != null ? outDir : Path.of("bench-out", scenario.name());
        RunInfo info = new RunInfo(scenario.name(), quick, seed, scenario.timeScale(quick), scenario.timeModel(quick),
                scenario.workloadDescription(quick), commandLine, Instant.now(), scenario.hasClasses());
        out.printf("scenario %s%s, variants %s, seed %d, time scale %sx%n", scenario.name(), quick ? " (--quick)" : "",
                variants, seed, info.timeScale());
        RunContext ctx = new RunContext(seed, quick, dir, fleets, progress, params);
        scenario.plan(List.copyOf(variants));
        List<VariantResult> results = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        int exitCode = 0;
        for (String variant : variants) {
            try {
                results.add(scenario.run(variant, ctx));
            } catch (VariantSkippedException e) {
                // a feature this build lacks: report it and compare the rest
                err.println("variant " + variant + " of " + scenario.name() + " skipped: " + e.getMessage());
                skipped.add(variant + " (" + e.getMessage() + ")");
            } catch (Exception e) {
                // stop here: later variants would be compared against an incomplete set
                err.println("variant " + variant + " of " + scenario.name() + " failed: " + e);
                exitCode = EXIT_VARIANT_FAILED;
                break;
            }
        }
        if (results.isEmpty()) {
            skipped.forEach(v -> out.println("skipped: " + v));
            return exitCode;
        }
        Report.Written written = Report.write(info, results, dir, jsonFile);
        out.println();
        out.print(written.consoleTable());
        out.println();
        written.files().forEach(f -> out.println("wrote " + f));
        skipped.forEach(v -> out.println("skipped: " + v));
        if (exitCode != 0) {
            out.println("partial results: only the variants above completed");
        }
        return exitCode;
    }
}
