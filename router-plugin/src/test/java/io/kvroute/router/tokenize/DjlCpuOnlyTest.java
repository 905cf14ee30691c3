package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The router never uses a GPU: loading a tokenizer must not probe CUDA in-process. DJL's tokenizer
 * loader asks {@code CudaUtils.getGpuCount()} for the platform flavour; in-process that loads
 * {@code libcudart} through JNA and, with an old driver, logs "Failed to detect GPU count: CUDA driver
 * version is insufficient" on every start. Runs a fresh JVM (DJL initialises once per JVM) and checks
 * its output and the native libraries mapped into it.
 */
class DjlCpuOnlyTest {

    @Test
    void tokenizerLoad_logsNoGpuProbe_andLoadsNoCudaRuntime() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                DjlStartupProbe.class.getName()).redirectErrorStream(true).start();
        child.getOutputStream().close();
        byte[] output = child.getInputStream().readAllBytes();
        assertThat(child.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String text = new String(output, StandardCharsets.UTF_8);
        assertThat(child.exitValue()).as(text).isZero();
        assertThat(text).contains("encoded 2 tokens");
        List<String> lines = text.substring(0, text.indexOf("--- maps")).lines().toList();
        assertThat(lines).as("no GPU probe warnings").noneMatch(l -> l.contains("GPU count") || l.contains("cudart")
                || l.contains("CUDA"));
        String maps = text.substring(text.indexOf("--- maps"));
        assertThat(maps).as("no CUDA runtime mapped into the router's process").doesNotContain("libcudart")
                .doesNotContain("libcuda.so");
        assertThat(File.separatorChar).isEqualTo('/'); // the maps check is Linux-only, like CI
    }
}
