package io.kvroute.bench.jmh;

import io.kvroute.router.prefix.KeyBuilder;
import io.kvroute.router.prefix.PrefixIndex;
import io.kvroute.router.prefix.PrefixIndexConfig;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Deterministic inputs shared by the prefix-index benchmarks (the cases LightLLM benchmarked its
 * compressed tree on, {@code lightllm/server/httpserver_for_pd_master/pd_selector/prompt_cache_tree.py};
 * docs/benchmarks-tree.md).
 */
public final class PrefixBenchData {
    public static final int STRIDE = KeyBuilder.DEFAULT_SAMPLE_STRIDE;

    private PrefixBenchData() {}

    /** Random printable ASCII text. */
    public static String asciiText(long seed, int chars) {
        SplittableRandom rnd = new SplittableRandom(seed);
        char[] out = new char[chars];
        for (int i = 0; i < chars; i++) {
            out[i] = (char) (' ' + rnd.nextInt(95));
        }
        return new String(out);
    }

    /** Random sampled-ASCII key elements. */
    public static int[] asciiKey(long seed, int length) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] out = new int[length];
        for (int i = 0; i < length; i++) {
            out[i] = ' ' + rnd.nextInt(95);
        }
        return out;
    }

    /** An index with default limits and a counter clock (one tick per insert). */
    public static PrefixIndex newIndex(PrefixIndexConfig config) {
        return new PrefixIndex(config, new Counter());
    }

    /** A named class, not a lambda: JOL cannot walk into hidden lambda classes. */
    static final class Counter implements LongSupplier {
        private final AtomicLong ticks = new AtomicLong();

        @Override
        public long getAsLong() {
            return ticks.incrementAndGet();
        }
    }

    /** Replaces {@code key[at]} by a different printable ASCII element. */
    public static int[] divergeAt(int[] key, int at, int length) {
        int[] out = java.util.Arrays.copyOf(key, length);
        out[at] = key[at] == '~' ? '!' : key[at] + 1;
        return out;
    }
}
