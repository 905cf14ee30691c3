package io.kvroute.bench;

import io.kvroute.bench.fleet.FleetFactory;
import io.kvroute.bench.report.Progress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * What a scenario run gets from the harness.
 *
 * @param seed seed for every random generator of the workload (same seed, same schedule and prompts)
 * @param quick scaled-down run that must finish within 60 s on a 2-core machine
 * @param outDir where reports go; a scenario may add files (e.g. raw logs)
 * @param fleets starts router + mock workers
 * @param progress creates a progress display per variant
 * @param params scenario parameters from {@code --param KEY=VALUE} (e.g. the trace file of
 *     {@code mooncake-trace}); each scenario documents the keys it reads and ignores the rest
 */
public record RunContext(long seed, boolean quick, Path outDir, FleetFactory fleets, Progress.Factory progress,
        Map<String, String> params) {

    public RunContext {
        Objects.requireNonNull(outDir, "outDir");
        Objects.requireNonNull(fleets, "fleets");
        Objects.requireNonNull(progress, "progress");
        params = Map.copyOf(Objects.requireNonNull(params, "params"));
    }

    /** A context without scenario parameters. */
    public RunContext(long seed, boolean quick, Path outDir, FleetFactory fleets, Progress.Factory progress) {
        this(seed, quick, outDir, fleets, progress, Map.of());
    }
}
