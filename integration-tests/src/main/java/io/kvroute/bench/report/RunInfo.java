package io.kvroute.bench.report;

import java.time.Instant;
import java.util.Objects;

/**
 * Facts about one harness invocation that every report states.
 *
 * @param timeScale simulated ms per wall ms
 * @param timeModel how simulated time is produced (from the scenario)
 * @param workload the workload description, including what --quick scales down
 */
public record RunInfo(
        String scenario,
        boolean quick,
        long seed,
        double timeScale,
        String timeModel,
        String workload,
        String commandLine,
        Instant startedAt,
        boolean hasClasses) {

    public RunInfo {
        Objects.requireNonNull(scenario, "scenario");
        Objects.requireNonNull(timeModel, "timeModel");
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(commandLine, "commandLine");
        Objects.requireNonNull(startedAt, "startedAt");
    }

    /** Cores, JDK and OS of this machine, one line. */
    public static String machine() {
        return Runtime.getRuntime().availableProcessors() + " cores, JDK " + System.getProperty("java.vm.name") + " "
                + Runtime.version() + ", " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
                + ", max heap " + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB";
    }
}
