package io.kvroute.router.tokenize;

/**
 * The one place that keeps DJL off the network. Without it every {@code HuggingFaceTokenizer}
 * load probes the EC2 metadata address (4 attempts of 1 s) to "call home". DJL reads
 * {@code DJL_OFFLINE} (env, which wins) or {@code ai.djl.offline} (property), and
 * {@code OPT_OUT_TRACKING} (env or property). Must run before any DJL class initialises; {@link
 * TokenizerRegistry} calls it first in {@code load}. Idempotent.
 *
 * <p>It also keeps CUDA out of the router's process (the router never uses a GPU). Every tokenizer
 * load asks {@code Platform.detectPlatform("tokenizers")} for a flavour, which calls
 * {@code CudaUtils.getGpuCount()}; in-process that loads {@code libcudart} through JNA and, with an
 * old driver, warns "Failed to detect GPU count" on every start. DJL has no switch that skips the
 * probe, but {@code ai.djl.util.cuda.fork=true} makes it load nothing in this JVM and ask a
 * short-lived child JVM instead (with its logging off); the answer is cached for the process, and the
 * CPU build of the tokenizer library is what runs.
 */
final class DjlOffline {

    private DjlOffline() {}

    static void ensure() {
        System.setProperty("ai.djl.offline", "true");
        System.setProperty("OPT_OUT_TRACKING", "true");
        System.setProperty("ai.djl.util.cuda.fork", "true");
    }
}
