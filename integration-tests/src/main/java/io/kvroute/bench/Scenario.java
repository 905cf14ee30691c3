package io.kvroute.bench;

import java.util.List;

/**
 * One benchmark scenario: a workload run once per variant (the first variant is the baseline that
 * reports compare against).
 */
public interface Scenario {

    /** Command-line name, e.g. {@code long-first-burst}. */
    String name();

    /** Variant names; the first is the baseline. */
    List<String> variants();

    /** Whether requests carry classes (e.g. short/long) that the metrics split by. */
    boolean hasClasses();

    /**
     * The variants this invocation will run, in order, before the first {@link #run}; a scenario that runs its
     * variants alternately in rounds runs them all on the first call and needs to know which.
     */
    default void plan(List<String> variants) {}

    /** Runs one variant end to end; never hangs (the client has an overall timeout). */
    VariantResult run(String variant, RunContext ctx) throws Exception;

    /** Simulated milliseconds per wall millisecond (the mock engine's speedup); 1 = real time. */
    default double timeScale(boolean quick) {
        return 1.0;
    }

    /** How simulated time is produced (the mock engine's time model), for the report. */
    default String timeModel(boolean quick) {
        return "real time";
    }

    /** The workload in one paragraph, including what --quick scales down. */
    default String workloadDescription(boolean quick) {
        return "";
    }
}
