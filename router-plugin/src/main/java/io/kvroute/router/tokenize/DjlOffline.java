package io.kvroute.router.tokenize;

/**
 * The one place that keeps DJL off the network. Without it every {@code HuggingFaceTokenizer}
 * load probes the EC2 metadata address (4 attempts of 1 s) to "call home". DJL reads
 * {@code DJL_OFFLINE} (env, which wins) or {@code ai.djl.offline} (property), and
 * {@code OPT_OUT_TRACKING} (env or property). Must run before any DJL class initialises; {@link
 * TokenizerRegistry} calls it first in {@code load}. Idempotent.
 */
final class DjlOffline {

    private DjlOffline() {}

    static void ensure() {
        System.setProperty("ai.djl.offline", "true");
        System.setProperty("OPT_OUT_TRACKING", "true");
    }
}
