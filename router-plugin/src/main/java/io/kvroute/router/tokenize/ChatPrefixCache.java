package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Exact token-id cache for rendered chat prompts, cut at the template's turn markers (ChatML's
 * {@code <|im_start|>}, Llama 3's {@code <|start_header_id|>}, Gemma's {@code <start_of_turn>}, ...: found
 * from each template by {@link TurnMarkers}), so that turn N of a conversation whose first N-1
 * turns the router has already seen tokenizes only the new messages (SMG keeps a tokenizer cache for the
 * same reason).
 *
 * <p><b>Why it is exact.</b> A HuggingFace tokenizer extracts non-normalized added tokens from the raw
 * text before it normalizes, pre-tokenizes or runs BPE, and then encodes the pieces between them
 * independently ({@code AddedVocabulary::extract_and_normalize} in huggingface/tokenizers). The ChatML
 * marker {@code <|im_start|>} is such a token in the Qwen family ({@code normalized: false, lstrip: false,
 * rstrip: false}), and {@link PrefixCachedTokenizer#wrap} only puts the cache in front of a chat encoder
 * when the marker encodes to one id. So for a rendered prompt cut at every occurrence of the marker, the ids of the
 * whole are the concatenation of the ids of the pieces: no BPE merge, regex split or NFC composition
 * crosses a marker. A marker that a user typed inside a message is cut the same way by the tokenizer,
 * so cutting at every occurrence (not only at message starts) is what keeps the equality.
 *
 * <p><b>Keys.</b> Segment {@code i} is stored under the chain hash of segments {@code 0..i} (the
 * rendered prefix up to and including it, {@code h_i = mix(h_{i-1}, hash(segment_i))}), and the entry
 * keeps the segment text itself. A hit requires the stored text to be equal to the segment, so a hash
 * collision can cost a miss but never a wrong id; the ids stored for a segment are its own ids, which by
 * the argument above do not depend on what precedes it.
 *
 * <p><b>Work per request.</b> Rendering and hashing stay linear in the prompt (a few hundred µs for a
 * 100k-token history); tokenization, the expensive part (~4-6 µs per token here), covers only the
 * segments after the longest cached prefix, encoded in one call and split at the marker id to store.
 *
 * <p><b>Memory.</b> Bounded in bytes by Caffeine's weigher ({@link #weightBytes}); eviction is Caffeine's
 * W-TinyLFU. Thread-safe; no lock is held while tokenizing.
 */
public final class ChatPrefixCache {

    /** The ChatML marker, the default cut point. */
    static final String MARKER = "<|im_start|>";

    /** Per-entry overhead beyond text and ids: entry, key, array headers, Caffeine node (rough, on purpose high). */
    private static final int ENTRY_OVERHEAD_BYTES = 128;

    /** Below this the rendered prompt has at most one segment worth caching: encode it directly. */
    private static final int MIN_SEGMENTS = 2;

    /**
     * What the last {@link #encode} on this thread did, for the per-request tokenize metric: encoding is
     * synchronous on the request's thread, so the front door reads it right after tokenizing.
     */
    private static final ThreadLocal<String> LAST_OUTCOME = new ThreadLocal<>();

    private final Cache<Long, Segment> segments;
    private final long maxBytes;
    private final LongAdder hitSegments = new LongAdder();
    private final LongAdder missSegments = new LongAdder();
    private final LongAdder hitTokens = new LongAdder();
    private final LongAdder missTokens = new LongAdder();

    /** @param maxBytes upper bound of the cached texts and ids, in bytes; must be positive */
    public ChatPrefixCache(long maxBytes) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive: " + maxBytes);
        }
        this.maxBytes = maxBytes;
        this.segments = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Long key, Segment s) -> weightBytes(s))
                .executor(Runnable::run) // maintenance on the caller: no pool thread per router
                .build();
    }

    /**
     * Ids of {@code rendered}, equal to {@code encoder.apply(rendered)} (see the class comment for why).
     *
     * @param markerId the single id of {@link #MARKER} under {@code encoder}
     */
    public int[] encode(String rendered, int markerId, Function<String, int[]> encoder) {
        return encode(rendered, new String[] {MARKER}, new int[] {markerId}, encoder);
    }

    /**
     * Ids of {@code rendered}, cut at every occurrence of any of {@code markers} (turn markers found from the
     * model's template, each a non-normalized added token without lstrip/rstrip whose single id is the
     * same index of {@code markerIds}); equal to {@code encoder.apply(rendered)}.
     */
    public int[] encode(String rendered, String[] markers, int[] markerIds, Function<String, int[]> encoder) {
        int[] starts = segmentStarts(rendered, markers);
        if (starts.length < MIN_SEGMENTS) {
            int[] ids = encoder.apply(rendered);
            missTokens.add(ids.length);
            LAST_OUTCOME.set("miss");
            return ids;
        }
        int[][] parts = new int[starts.length][];
        long[] keys = new long[starts.length];
        long chain = 0x9E3779B97F4A7C15L;
        int cached = 0;
        int cachedIds = 0;
        boolean hitting = true;
        for (int i = 0; i < starts.length; i++) {
            int from = starts[i];
            int to = i + 1 < starts.length ? starts[i + 1] : rendered.length();
            chain = mix(chain, hashRange(rendered, from, to));
            keys[i] = chain;
            if (hitting) {
                Segment s = segments.getIfPresent(chain);
                if (s != null && s.textEquals(rendered, from, to)) {
                    parts[i] = s.ids;
                    cached++;
                    cachedIds += s.ids.length;
                } else {
                    hitting = false;
                }
            }
        }
        hitSegments.add(cached);
        hitTokens.add(cachedIds);
        if (cached == starts.length) {
            LAST_OUTCOME.set("hit");
            return concat(parts, cachedIds, null);
        }
        LAST_OUTCOME.set(cached == 0 ? "miss" : "partial");
        int[] rest = encoder.apply(rendered.substring(starts[cached]));
        missSegments.add(starts.length - cached);
        missTokens.add(rest.length);
        storeSplit(rendered, starts, keys, cached, rest, markers, markerIds);
        return concat(parts, cachedIds, rest);
    }

    /**
     * Stores the ids of segments {@code first..} cut from {@code rest} at the marker id. When the count
     * of marker ids does not match the count of segments that start with the marker (a tokenizer that
     * breaks the class invariant), nothing is stored: the answer is still the full encoding.
     */
    private void storeSplit(String rendered, int[] starts, long[] keys, int first, int[] rest, String[] markers,
            int[] markerIds) {
        int[] cuts = new int[starts.length - first + 1];
        int n = 0;
        boolean leading = markerAt(rendered, starts[first], markers) < 0;
        if (leading) {
            cuts[n++] = 0; // segment 0 text before the first marker: it does not start with the marker id
        }
        for (int i = 0; i < rest.length; i++) {
            if (isMarkerId(rest[i], markerIds)) {
                if (n == cuts.length - 1) {
                    return;
                }
                cuts[n++] = i;
            }
        }
        if (n != cuts.length - 1) {
            return;
        }
        cuts[n] = rest.length;
        for (int k = 0; k < n; k++) {
            int seg = first + k;
            int from = starts[seg];
            int to = seg + 1 < starts.length ? starts[seg + 1] : rendered.length();
            segments.put(keys[seg], new Segment(rendered.substring(from, to), Arrays.copyOfRange(rest, cuts[k], cuts[k + 1])));
        }
    }

    /**
     * What the last {@link #encode} on the calling thread did ({@code hit}, {@code partial}, {@code miss}), or
     * {@code none} when none ran since the previous call; clears it.
     */
    public static String takeOutcomeOnThisThread() {
        String outcome = LAST_OUTCOME.get();
        LAST_OUTCOME.remove();
        return outcome == null ? "none" : outcome;
    }

    /** Start offsets of the segments: 0, then every marker occurrence after 0. */
    static int[] segmentStarts(String rendered) {
        return segmentStarts(rendered, new String[] {MARKER});
    }

    /**
     * Start offsets of the segments: 0, then every occurrence after 0 of any marker, left to right, an
     * occurrence overlapping the previous one skipped (the tokenizer matches the leftmost token too).
     */
    static int[] segmentStarts(String rendered, String[] markers) {
        if (markers.length == 1) {
            String marker = markers[0];
            int count = 1;
            for (int at = rendered.indexOf(marker, 1); at >= 0; at = rendered.indexOf(marker, at + marker.length())) {
                count++;
            }
            int[] starts = new int[count];
            int n = 1;
            for (int at = rendered.indexOf(marker, 1); at >= 0; at = rendered.indexOf(marker, at + marker.length())) {
                starts[n++] = at;
            }
            return starts;
        }
        int[] next = new int[markers.length];
        for (int m = 0; m < markers.length; m++) {
            next[m] = rendered.indexOf(markers[m], 1);
        }
        int[] starts = new int[8];
        int n = 1;
        int from = 1;
        while (true) {
            int best = -1;
            for (int m = 0; m < markers.length; m++) {
                while (next[m] >= 0 && next[m] < from) {
                    next[m] = rendered.indexOf(markers[m], from);
                }
                if (next[m] >= 0 && (best < 0 || next[m] < next[best])) {
                    best = m;
                }
            }
            if (best < 0) {
                return Arrays.copyOf(starts, n);
            }
            if (n == starts.length) {
                starts = Arrays.copyOf(starts, n * 2);
            }
            starts[n++] = next[best];
            from = next[best] + markers[best].length();
        }
    }

    private static int markerAt(String rendered, int at, String[] markers) {
        for (int m = 0; m < markers.length; m++) {
            if (rendered.startsWith(markers[m], at)) {
                return m;
            }
        }
        return -1;
    }

    private static boolean isMarkerId(int id, int[] markerIds) {
        for (int markerId : markerIds) {
            if (id == markerId) {
                return true;
            }
        }
        return false;
    }

    private static int[] concat(int[][] parts, int cachedIds, int[] rest) {
        int[] out = new int[cachedIds + (rest == null ? 0 : rest.length)];
        int at = 0;
        for (int[] p : parts) {
            if (p == null) {
                break;
            }
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        if (rest != null) {
            System.arraycopy(rest, 0, out, at, rest.length);
        }
        return out;
    }

    /**
     * 64-bit FNV-1a-style hash of {@code s[from, to)} with a final avalanche; collisions only cost a miss.
     * Four lanes over interleaved chars, so consecutive multiplies do not wait on each other (one lane
     * was a serial chain of one multiply per char over the whole rendered chat).
     */
    static long hashRange(String s, int from, int to) {
        long a = 0xCBF29CE484222325L ^ (to - from);
        long b = 0x84222325CBF29CE4L;
        long c = 0x9E3779B97F4A7C15L;
        long d = 0xC2B2AE3D27D4EB4FL;
        int i = from;
        for (; i + 3 < to; i += 4) {
            a = (a ^ s.charAt(i)) * 0x100000001B3L;
            b = (b ^ s.charAt(i + 1)) * 0x100000001B3L;
            c = (c ^ s.charAt(i + 2)) * 0x100000001B3L;
            d = (d ^ s.charAt(i + 3)) * 0x100000001B3L;
        }
        for (; i < to; i++) {
            a = (a ^ s.charAt(i)) * 0x100000001B3L;
        }
        return mix(a ^ Long.rotateLeft(b, 17) ^ Long.rotateLeft(c, 31) ^ Long.rotateLeft(d, 47), 0);
    }

    private static long mix(long a, long b) {
        long h = a * 0xBF58476D1CE4E5B9L + b;
        h ^= h >>> 31;
        h *= 0x94D049BB133111EBL;
        return h ^ (h >>> 29);
    }

    static int weightBytes(Segment s) {
        long bytes = ENTRY_OVERHEAD_BYTES + 2L * s.text.length() + 4L * s.ids.length;
        return (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    public long maxBytes() {
        return maxBytes;
    }

    /** Bytes currently held (the weigher's sum), after pending maintenance. */
    public long bytesHeld() {
        segments.cleanUp();
        return segments.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
    }

    public long hitSegments() {
        return hitSegments.sum();
    }

    public long missSegments() {
        return missSegments.sum();
    }

    /** Ids served from the cache. */
    public long hitTokens() {
        return hitTokens.sum();
    }

    /** Ids the tokenizer had to compute. */
    public long missTokens() {
        return missTokens.sum();
    }

    /** One cached segment: its text (for the equality check) and its ids. Immutable once stored. */
    record Segment(String text, int[] ids) {
        Segment {
            requireNonNull(text, "text");
            requireNonNull(ids, "ids");
        }

        /**
         * A copy of the range compared with {@code equals}: on JDK 17 {@code regionMatches} compares two-byte
         * strings byte by byte, while {@code equals} is a vectorized intrinsic (about 6x faster over a 400k-char
         * chat, copy included).
         */
        boolean textEquals(String s, int from, int to) {
            return text.length() == to - from && text.equals(s.substring(from, to));
        }
    }
}
