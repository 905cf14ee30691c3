package io.kvroute.bench.jmh;

import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.PageHash;
import io.kvroute.router.kvevents.BlockIndex;
import io.kvroute.router.kvevents.KvEventIngest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The exact KV-event index (the engines' KV events applied to
 * a block-hash tree, docs/benchmarks.md "KV-event index"). {@code ingest}: decode one SGLang-format batch of 16
 * BlockStored events x 16 hashes and apply it, then the matching BlockRemoved batch (so the index
 * stays at its preloaded size); one op = one block event. {@code lookup128k}: 64 workers, 1M
 * blocks stored (64 workers x 16,384 blocks, block size 16, each worker a 30% shared system prefix
 * plus its own), a 128k-token request = 8,192 precomputed block hashes matched against all of them:
 * every worker's held set is prefix-closed, so the match bisects (two distinct depths).
 * {@code lookup128kDirty}: the same with every worker dirty (a hole past the request), walked block
 * by block: the slow path. {@code lookup128kCold}: the clean lookup with the caches flushed before
 * each call (the warm one repeats one request, whose ~25 probed cells then stay cached).
 * {@code revalidate1M}: the recount of the whole 1M-block table that an unknown slot triggers (at
 * most once a second, on the events thread).
 * {@code hash128k}: the SHA-256 chain of that request's tokens (done once per request at ingress).
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class KvEventsBench {
    static final int WORKERS = 64;
    static final int BLOCK_SIZE = 16;
    static final int BLOCKS_PER_WORKER = 16_384;
    static final int REQUEST_TOKENS = 128 * 1024;
    static final int EVENTS_PER_BATCH = 16;
    static final int HASHES_PER_EVENT = 16;

    @State(Scope.Benchmark)
    public static class Loaded {
        BlockIndex index;
        long[] requestHashes;
        int[] requestTokens;
        byte[][] storeBatches;
        byte[][] removeBatches;
        /** Per worker, one of its own blocks past the request's 8,192 (a hole there dirties the worker). */
        long[] beyondRequest;
        /** Worker 0's chain. */
        long[] chain0;
        int next;

        @Setup(Level.Trial)
        public void setUp() {
            SplittableRandom rnd = new SplittableRandom(17);
            index = new BlockIndex(1 << 22);
            BlockIndex.Key key = new BlockIndex.Key("m", -1, BLOCK_SIZE);
            int shared = BLOCKS_PER_WORKER * 3 / 10;
            long[] system = new long[shared];
            for (int i = 0; i < shared; i++) {
                system[i] = rnd.nextLong();
            }
            long[] requestChain = null;
            beyondRequest = new long[WORKERS];
            for (int w = 0; w < WORKERS; w++) {
                long[] chain = new long[BLOCKS_PER_WORKER];
                System.arraycopy(system, 0, chain, 0, shared);
                for (int i = shared; i < chain.length; i++) {
                    chain[i] = rnd.nextLong();
                }
                index.store(key, w, chain);
                beyondRequest[w] = chain[BLOCKS_PER_WORKER * 3 / 4];
                if (w == 0) {
                    chain0 = chain;
                }
                if (w == WORKERS / 2) {
                    requestChain = chain;
                }
            }
            // the request: worker 32's whole chain (8,192 blocks = 128k tokens): full match on one, 30% on the rest
            requestHashes = java.util.Arrays.copyOf(requestChain, REQUEST_TOKENS / BLOCK_SIZE);
            requestTokens = new int[REQUEST_TOKENS];
            for (int i = 0; i < requestTokens.length; i++) {
                requestTokens[i] = rnd.nextInt(151_000);
            }
            storeBatches = new byte[64][];
            removeBatches = new byte[64][];
            for (int b = 0; b < storeBatches.length; b++) {
                long[][] hashes = new long[EVENTS_PER_BATCH][HASHES_PER_EVENT];
                for (long[] h : hashes) {
                    for (int i = 0; i < h.length; i++) {
                        h[i] = rnd.nextLong();
                    }
                }
                storeBatches[b] = batch(hashes, true);
                removeBatches[b] = batch(hashes, false);
            }
        }
    }

    /**
     * The same index with every worker dirty: each lost one of its own blocks past the request, so
     * no answer changes, but no worker's held set is prefix-closed and every one is walked block by
     * block (the slow path, and the whole lookup before parents were kept).
     */
    @State(Scope.Benchmark)
    public static class LoadedDirty extends Loaded {
        @Setup(Level.Trial)
        public void dirty() {
            for (int w = 0; w < WORKERS; w++) {
                index.remove(w, new long[] {beyondRequest[w]});
            }
        }
    }

    /**
     * The clean index with the CPU caches flushed before every lookup (a 64 MiB scan, twice the L3
     * of the box measured, in an untimed per-invocation setup): the bisection's probes are
     * dependent loads, so cold they cost a memory round trip each, which a repeated warm lookup
     * hides.
     */
    @State(Scope.Benchmark)
    public static class LoadedCold extends Loaded {
        final long[] junk = new long[8 << 20];
        long sink;

        @Setup(Level.Invocation)
        public void flushCaches() {
            long sum = 0;
            for (int i = 0; i < junk.length; i += 8) {
                sum += junk[i]++;
            }
            sink += sum;
        }
    }

    /**
     * Before every call, worker 0's last block gets three children and loses them and then itself:
     * the block's child count is sticky, so worker 0 is left unknown and the next
     * {@link BlockIndex#maintain} recounts the whole table (1M blocks): the writer's stall.
     */
    @State(Scope.Benchmark)
    public static class LoadedUnknown extends Loaded {
        long nowNanos;

        @Setup(Level.Invocation)
        public void makeUnknown() {
            BlockIndex.Key key = new BlockIndex.Key("m", -1, BLOCK_SIZE);
            long last = chain0[chain0.length - 1];
            index.store(key, 0, true, chain0[chain0.length - 2], new long[] {last});
            long[] children = {next * 3L + 1, next * 3L + 2, next * 3L + 3};
            next++;
            for (long child : children) {
                index.store(key, 0, true, last, new long[] {child});
            }
            index.remove(0, children);
            index.remove(0, new long[] {last});
            nowNanos += 2_000_000_000L;
        }
    }

    /** An SGLang batch {@code [ts, [events...], 0]} of tagged-array events, each with its pages' tokens. */
    static byte[] batch(long[][] hashes, boolean store) {
        int[] tokens = new int[HASHES_PER_EVENT * BLOCK_SIZE];
        for (int t = 0; t < tokens.length; t++) {
            tokens[t] = 1000 + t;
        }
        List<KvEventWire.Event> events = new ArrayList<>();
        for (long[] h : hashes) {
            events.add(store ? KvEventWire.stored(h, null, tokens, BLOCK_SIZE, null, null) : KvEventWire.removed(h));
        }
        return KvEventWire.sglangBatch(1.7e9, events, 0);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(2 * EVENTS_PER_BATCH * HASHES_PER_EVENT)
    public int ingest(Loaded s) {
        int b = s.next++ & 63;
        int slot = 100; // a publisher of its own, so the preloaded workers stay intact
        return KvEventIngest.apply(s.storeBatches[b], s.index, "m", BLOCK_SIZE, slot)
                + KvEventIngest.apply(s.removeBatches[b], s.index, "m", BLOCK_SIZE, slot);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    public int[] lookup128k(Loaded s) {
        return s.index.match(new BlockIndex.Key("m", -1, BLOCK_SIZE), s.requestHashes, WORKERS);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    public int[] lookup128kDirty(LoadedDirty s) {
        return s.index.match(new BlockIndex.Key("m", -1, BLOCK_SIZE), s.requestHashes, WORKERS);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    public int[] lookup128kCold(LoadedCold s) {
        return s.index.match(new BlockIndex.Key("m", -1, BLOCK_SIZE), s.requestHashes, WORKERS);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public BlockIndex revalidate1M(LoadedUnknown s) {
        s.index.maintain(s.nowNanos);
        return s.index;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    public long[] hash128k(Loaded s) {
        return new PageHash(BLOCK_SIZE).hashes(s.requestTokens, s.requestTokens.length);
    }
}
