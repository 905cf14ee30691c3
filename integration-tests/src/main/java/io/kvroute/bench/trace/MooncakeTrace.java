package io.kvroute.bench.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.RandomAccess;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.zip.GZIPInputStream;

/**
 * Reads a Mooncake FAST'25 trace ({@code kvcache-ai/Mooncake FAST25-release/traces/*.jsonl}, gzipped
 * or not): one JSON object per line with {@code timestamp} (ms), {@code input_length},
 * {@code output_length} and {@code hash_ids}. Also the two transforms the benchmark needs: fleet
 * scaling by trace copies whose hash ids are disjoint, and the offline reuse bound of an infinite
 * shared cache, and the seeded reordering of same-millisecond bursts that a real-time client causes.
 * Stateless.
 */
public final class MooncakeTrace {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Bounds how many lines are read (the conversation trace has 12,031). */
    static final int MAX_REQUESTS = 1_000_000;

    private MooncakeTrace() {}

    /** The first {@code limit} requests of the trace at {@code file} (all when {@code limit <= 0}). */
    public static List<TraceRequest> read(Path file, int limit) throws IOException {
        try (InputStream raw = Files.newInputStream(file)) {
            InputStream in = file.getFileName().toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw;
            return read(in, limit);
        }
    }

    /** As {@link #read(Path, int)} from a stream (a classpath resource). */
    public static List<TraceRequest> read(InputStream in, int limit) throws IOException {
        int max = limit <= 0 ? MAX_REQUESTS : Math.min(limit, MAX_REQUESTS);
        List<TraceRequest> out = new ArrayList<>();
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        int lineNo = 0;
        while (out.size() < max && (line = reader.readLine()) != null) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode n = JSON.readTree(line);
            JsonNode ids = n.path("hash_ids");
            if (!ids.isArray()) {
                throw new IOException("trace line " + lineNo + ": hash_ids must be an array");
            }
            long[] hashIds = new long[ids.size()];
            for (int i = 0; i < hashIds.length; i++) {
                hashIds[i] = ids.get(i).asLong();
            }
            try {
                out.add(new TraceRequest(n.path("timestamp").asLong(), n.path("input_length").asInt(),
                        n.path("output_length").asInt(), hashIds));
            } catch (IllegalArgumentException e) {
                throw new IOException("trace line " + lineNo + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    /**
     * {@code copies} copies of {@code base} merged by timestamp (copy order breaks ties), copy {@code c}
     * with every hash id moved past all ids of the copies before it: the arrival rate is {@code copies}
     * times the trace's and no block is shared across copies.
     *
     * <p>The result is a read-only view: it holds {@code base} and one int per request (which copy of
     * which base line), and {@link List#get} builds a copy's shifted request when asked, so a large
     * fleet's trace costs no more hash-id arrays than the base has (the simulation asks for each
     * request once, when it arrives, and drops it after).
     */
    public static List<TraceRequest> replicate(List<TraceRequest> base, int copies) {
        if (copies < 1) {
            throw new IllegalArgumentException("copies must be >= 1: " + copies);
        }
        long maxId = 0;
        for (TraceRequest r : base) {
            for (long id : r.hashIds()) {
                maxId = Math.max(maxId, id);
            }
        }
        return new Copies(List.copyOf(base), copies, maxId + 1);
    }

    /**
     * The merged copies as (copy, base line) positions {@code copy * n + line}: base lines in stable
     * timestamp order, and within one timestamp every copy's lines before the next copy's, which is
     * the order a stable sort by timestamp gives the copies listed one after another.
     */
    private static final class Copies extends AbstractList<TraceRequest> implements RandomAccess {
        private final List<TraceRequest> base;
        private final long stride;
        private final int[] positions;

        Copies(List<TraceRequest> base, int copies, long stride) {
            this.base = base;
            this.stride = stride;
            int n = base.size();
            int[] byTime = IntStream.range(0, n).boxed()
                    .sorted(Comparator.comparingLong(i -> base.get(i).timestampMs())) // stable: lines keep their order
                    .mapToInt(Integer::intValue).toArray();
            this.positions = new int[Math.multiplyExact(n, copies)];
            int at = 0;
            for (int from = 0; from < n; ) {
                long t = base.get(byTime[from]).timestampMs();
                int to = from;
                while (to < n && base.get(byTime[to]).timestampMs() == t) {
                    to++;
                }
                for (int c = 0; c < copies; c++) {
                    for (int i = from; i < to; i++) {
                        positions[at++] = c * n + byTime[i];
                    }
                }
                from = to;
            }
        }

        @Override
        public TraceRequest get(int index) {
            int position = positions[index];
            int copy = position / base.size();
            TraceRequest r = base.get(position % base.size());
            return copy == 0 ? r : r.shifted(copy * stride);
        }

        @Override
        public int size() {
            return positions.length;
        }
    }

    /**
     * {@code requests} with each run of consecutive requests at the same timestamp (a burst) in an order
     * drawn from {@code seed}, everything else as given. A real-time client does not keep a burst's order:
     * its dispatch threads hand the burst's requests to the HTTP client concurrently and the router
     * serves each on its own thread, so the order in which a burst reaches the policy (which is what
     * round robin assigns by) differs from run to run. Replaying in trace order is one such order; a
     * few seeds show how much an arm's figures depend on it. Same seed, same order.
     */
    public static List<TraceRequest> shuffleBursts(List<TraceRequest> requests, long seed) {
        List<TraceRequest> out = new ArrayList<>(requests);
        SplittableRandom random = new SplittableRandom(seed);
        for (int from = 0; from < out.size(); ) {
            long t = out.get(from).timestampMs();
            int to = from + 1;
            while (to < out.size() && out.get(to).timestampMs() == t) {
                to++;
            }
            for (int i = to - 1; i > from; i--) { // Fisher-Yates within [from, to)
                Collections.swap(out, i, from + random.nextInt(i - from + 1));
            }
            from = to;
        }
        return out;
    }

    /**
     * What an infinite cache shared by the whole fleet would reuse over {@code requests} in arrival
     * order: blocks whose id was seen before, by count and by tokens (the last block of a prompt is
     * partial). The token share is the bound the engines' cached-token fraction compares with.
     */
    public static Bound infiniteCacheBound(List<TraceRequest> requests) {
        Set<Long> seen = new HashSet<>();
        long blocks = 0;
        long reusedBlocks = 0;
        long tokens = 0;
        long reusedTokens = 0;
        for (TraceRequest r : requests) {
            long[] ids = r.hashIds();
            for (int b = 0; b < ids.length; b++) {
                int blockTokens = Math.max(0, Math.min(BlockTokens.BLOCK_TOKENS, r.inputLength() - b * BlockTokens.BLOCK_TOKENS));
                blocks++;
                tokens += blockTokens;
                if (!seen.add(ids[b])) {
                    reusedBlocks++;
                    reusedTokens += blockTokens;
                }
            }
        }
        return new Bound(blocks, reusedBlocks, tokens, reusedTokens);
    }

    /**
     * {@link #infiniteCacheBound} of {@link #replicate replicate(base, copies)} without walking the
     * copies: they share no block and each visits the base lines in one order (that of
     * {@code replicate(base, 1)}), so each copy reuses exactly what that one does.
     */
    public static Bound infiniteCacheBound(List<TraceRequest> base, int copies) {
        if (copies < 1) {
            throw new IllegalArgumentException("copies must be >= 1: " + copies);
        }
        Bound one = infiniteCacheBound(replicate(base, 1));
        return new Bound(one.blocks() * copies, one.reusedBlocks() * copies, one.tokens() * copies,
                one.reusedTokens() * copies);
    }

    /** The infinite-cache reuse of a trace slice. */
    public record Bound(long blocks, long reusedBlocks, long tokens, long reusedTokens) {
        public double blockRatio() {
            return blocks == 0 ? Double.NaN : (double) reusedBlocks / blocks;
        }

        public double tokenRatio() {
            return tokens == 0 ? Double.NaN : (double) reusedTokens / tokens;
        }
    }
}
