package io.kvroute.router.tokenize;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place that configures DJL, and only while tokenizers load: DJL reads its settings from
 * system properties, which in a servlet container belong to every web application of the JVM. So
 * {@link #during} sets them, runs the load, and puts back what was there before; nothing stays set
 * once the router is up. The window holds the JVM-wide monitor of {@link System#getProperties()}, so
 * two deployments loading at once (each with its own copy of this class) take turns.
 *
 * <p>What the window sets, and why:
 * <ul>
 *   <li><b>Offline.</b> {@code ai.djl.offline} and {@code OPT_OUT_TRACKING}: without them every
 *       {@code HuggingFaceTokenizer} load probes the EC2 metadata address (4 attempts of 1 s) to "call
 *       home". (Environment variables {@code DJL_OFFLINE}, {@code OPT_OUT_TRACKING} win over both.)</li>
 *   <li><b>CPU, without a GPU probe.</b> The router never uses a GPU, but DJL's platform detection
 *       asks {@code CudaUtils.getGpuCount()} for a flavour: in-process it loads {@code libcudart}
 *       through JNA (with an old driver: "Failed to detect GPU count" on every start); with
 *       {@code ai.djl.util.cuda.fork} it starts a child JVM on {@code java.class.path}, which inside a
 *       servlet container does not hold DJL ({@code ClassNotFoundException: ai.djl.util.cuda.CudaUtils}
 *       and two long warnings per deployment). The window initialises {@code CudaUtils} with the fork
 *       setting (so it loads nothing in this JVM) and then records its cached answer as "0 GPUs", so no
 *       child is started either: the CPU build of the tokenizer library is chosen with no probe.</li>
 *   <li><b>A native library per class loader.</b> The JVM lets one class loader load a given native
 *       library file; DJL extracts {@code libtokenizers} once to a shared cache directory and loads it
 *       from there, so a redeployed WAR (a new class loader, while the old one is not yet collected)
 *       failed with "already loaded in another classloader". The window extracts this class loader's
 *       own copy to a fresh temporary directory and points DJL at it ({@code RUST_LIBRARY_PATH}); the
 *       file is deleted once loaded (the mapping stays valid). An operator's own
 *       {@code RUST_LIBRARY_PATH} (environment or property) is respected.</li>
 * </ul>
 *
 * <p>These are DJL 0.38 internals ({@code ai.djl.huggingface.tokenizers.jni.LibUtils},
 * {@code ai.djl.util.cuda.CudaUtils}); when one is not found the step is skipped and DJL's own
 * behaviour applies, so an upgrade degrades to the old warnings, never to a failed load.
 */
final class DjlOffline {

    private static final Logger LOG = LoggerFactory.getLogger(DjlOffline.class);
    static final String CUDA_FORK = "ai.djl.util.cuda.fork";
    static final String RUST_LIBRARY_PATH = "RUST_LIBRARY_PATH";
    private static final String LIB_UTILS = "ai.djl.huggingface.tokenizers.jni.LibUtils";
    private static final String CUDA_UTILS = "ai.djl.util.cuda.CudaUtils";

    /** Guarded by the monitor of {@link System#getProperties()}: this class loader's library is loaded. */
    private static boolean nativeLoaded;

    private DjlOffline() {}

    /** Work that loads tokenizers. */
    interface Load<T> {
        T run() throws IOException;
    }

    /** Runs {@code load} with DJL configured as above, then restores every property it touched. */
    static <T> T during(Load<T> load) throws IOException {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("ai.djl.offline", "true");
        settings.put("OPT_OUT_TRACKING", "true");
        settings.put(CUDA_FORK, "true");
        synchronized (System.getProperties()) {
            Map<String, String> before = new LinkedHashMap<>();
            for (String key : settings.keySet()) {
                before.put(key, System.getProperty(key));
            }
            before.put(RUST_LIBRARY_PATH, System.getProperty(RUST_LIBRARY_PATH));
            try {
                settings.forEach(System::setProperty);
                if (!nativeLoaded) {
                    pinCpuWithoutProbe();
                    loadOwnNativeCopy();
                    nativeLoaded = true;
                }
                return load.run();
            } finally {
                before.forEach((key, value) -> {
                    if (value == null) {
                        System.clearProperty(key);
                    } else {
                        System.setProperty(key, value);
                    }
                });
            }
        }
    }

    /** Initialises CudaUtils with the fork setting (no in-process CUDA) and caches "0 GPUs" in it. */
    private static void pinCpuWithoutProbe() {
        try {
            Class<?> cuda = Class.forName(CUDA_UTILS, true, DjlOffline.class.getClassLoader());
            Field answer = cuda.getDeclaredField("gpuInfo");
            answer.setAccessible(true);
            if (answer.get(null) == null) {
                answer.set(null, new String[] {"0"});
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.debug("DJL's GPU probe could not be pinned to the CPU; DJL probes as usual", e);
        }
    }

    /** Loads DJL's native tokenizer library from a copy of this class loader's own, then deletes the copy. */
    private static void loadOwnNativeCopy() throws IOException {
        if (System.getenv(RUST_LIBRARY_PATH) != null || System.getProperty(RUST_LIBRARY_PATH) != null) {
            return; // the operator's library
        }
        String resource = "native/lib/" + classifier() + "/cpu/" + System.mapLibraryName("tokenizers");
        ClassLoader loader = DjlOffline.class.getClassLoader();
        Path dir = null;
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                LOG.debug("no bundled {}; DJL loads its own", resource);
                return;
            }
            dir = Files.createTempDirectory("kvroute-tokenizers-");
            Path copy = dir.resolve(System.mapLibraryName("tokenizers"));
            Files.copy(in, copy);
            System.setProperty(RUST_LIBRARY_PATH, copy.toString());
            Class.forName(LIB_UTILS, true, loader); // loads the copy into this class loader
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.debug("DJL's native loader was not initialised from a private copy", e);
        } finally {
            if (dir != null) {
                deleteQuietly(dir);
            }
        }
    }

    /** Deletes the copy (a loaded library stays mapped on Linux and macOS); else leaves it for JVM exit. */
    private static void deleteQuietly(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                if (!p.toFile().delete()) {
                    p.toFile().deleteOnExit();
                }
            }
        } catch (IOException e) {
            LOG.debug("could not list {}", dir, e);
        }
        if (!dir.toFile().delete()) {
            dir.toFile().deleteOnExit();
        }
    }

    /** DJL's platform directory name for this JVM ({@code linux-x86_64}, {@code osx-aarch64}, ...). */
    static String classifier() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String prefix = os.startsWith("win") ? "win" : os.startsWith("mac") ? "osx" : "linux";
        String arch = System.getProperty("os.arch", "");
        arch = arch.equals("amd64") ? "x86_64" : arch;
        return prefix + "-" + arch;
    }
}
