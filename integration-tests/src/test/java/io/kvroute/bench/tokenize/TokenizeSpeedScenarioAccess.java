package io.kvroute.bench.tokenize;

/** Test access to the scenario's package-private helpers. */
public final class TokenizeSpeedScenarioAccess {

    private TokenizeSpeedScenarioAccess() {}

    /** Whether the Rust arm can run here (Node's tokenizers installed beside the module). */
    public static boolean rustInstalled() {
        return RustEncoder.findDir(null).isPresent();
    }
}
