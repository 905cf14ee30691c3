package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * Tokenizes one rendered chat prompt in a few parts at once, with ids identical to one pass over the whole.
 *
 * <p><b>Why the parts are independent.</b> A Hugging Face tokenizer first extracts the non-normalized added
 * tokens from the raw text, then normalizes, pre-tokenizes and runs the model on each piece between them
 * on its own ({@code AddedVocabulary::extract_and_normalize} in huggingface/tokenizers
 * {@code tokenizers/src/tokenizer/added_vocabulary.rs}): nothing merges across such a token. The cut points
 * here are the template's turn markers found by {@link TurnMarkers} ({@code <|im_start|>},
 * {@code <|start_header_id|>}, ...: added tokens with {@code normalized: false}, no {@code lstrip} or
 * {@code rstrip}, one id each), taken at the same occurrences {@link ChatPrefixCache} cuts at; a part that
 * starts at a marker encodes to the marker's id followed by what the whole would have produced there
 * (also under Metaspace's {@code prepend_scheme: first}: the piece after the marker is not at the part's
 * start). {@link #probe} checks the equality once per tokenizer on a few texts; a tokenizer that fails it
 * stays sequential.
 *
 * <p><b>Scheduling.</b> The prompt is cut into at most {@code threads} parts of about equal length at the
 * marker occurrences nearest to equal shares (a part never shorter than {@code minPartChars}: below that the
 * hand-off costs more than it saves). Parts 2..k go to the bounded executor as {@link FutureTask}s; the
 * request's thread encodes part 1, then runs any part no worker has started yet itself (a task runs once),
 * and waits only for parts already running. A refused hand-off is run by the caller.
 *
 * <p>Immutable and thread-safe when {@code encoder} is.
 */
final class SegmentParallelEncoder implements Function<String, int[]> {

    /** Below this many chars per part, the prompt is encoded in one call (~2k tokens, ~10 ms here). */
    static final int DEFAULT_MIN_PART_CHARS = 8_192;

    private final String[] markers;
    private final Function<String, int[]> encoder;
    private final Executor executor;
    private final int threads;
    private final int minPartChars;

    SegmentParallelEncoder(String[] markers, Function<String, int[]> encoder, Executor executor, int threads,
            int minPartChars) {
        this.markers = markers.clone();
        this.encoder = requireNonNull(encoder, "encoder");
        this.executor = requireNonNull(executor, "executor");
        if (threads < 2) {
            throw new IllegalArgumentException("threads must be at least 2: " + threads);
        }
        this.threads = threads;
        this.minPartChars = Math.max(1, minPartChars);
    }

    /**
     * Whether cutting at {@code markers} gives the ids of the whole for this tokenizer, on texts where a
     * marker follows a word, a space and a newline, and precedes a space, a word and a newline.
     */
    static boolean probe(String[] markers, Function<String, int[]> encoder) {
        for (String m : markers) {
            for (String text : List.of("Hello there" + m + "user\nHi you" + m + " again",
                    "x " + m + "\n  y\n" + m + "z  ", "头" + m + "尾 😀" + m + m + "end")) {
                int[] whole = encoder.apply(text);
                int[] starts = ChatPrefixCache.segmentStarts(text, new String[] {m});
                List<int[]> parts = new ArrayList<>();
                for (int i = 0; i < starts.length; i++) {
                    parts.add(encoder.apply(text.substring(starts[i], i + 1 < starts.length ? starts[i + 1] : text.length())));
                }
                if (!Arrays.equals(whole, concat(parts))) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public int[] apply(String text) {
        int[] cuts = cuts(text);
        if (cuts.length == 0) {
            return encoder.apply(text);
        }
        List<FutureTask<int[]>> tasks = new ArrayList<>(cuts.length);
        for (int i = 0; i < cuts.length; i++) {
            String part = text.substring(cuts[i], i + 1 < cuts.length ? cuts[i + 1] : text.length());
            FutureTask<int[]> task = new FutureTask<>(() -> encoder.apply(part));
            tasks.add(task);
            try {
                executor.execute(task);
            } catch (RejectedExecutionException busy) {
                // left for this thread below
            }
        }
        List<int[]> parts = new ArrayList<>(cuts.length + 1);
        parts.add(encoder.apply(text.substring(0, cuts[0])));
        for (FutureTask<int[]> task : tasks) {
            task.run(); // no-op when a worker has started or finished it
        }
        for (FutureTask<int[]> task : tasks) {
            parts.add(join(task));
        }
        return concat(parts);
    }

    /**
     * Start offsets of parts 2..k (empty: encode in one call): marker occurrences nearest to equal shares of
     * the text, increasing, each part at least {@link #minPartChars} long.
     */
    int[] cuts(String text) {
        int parts = Math.min(threads, text.length() / minPartChars);
        if (parts < 2) {
            return new int[0];
        }
        int[] starts = ChatPrefixCache.segmentStarts(text, markers);
        if (starts.length < 2) {
            return new int[0];
        }
        int[] out = new int[parts - 1];
        int n = 0;
        int previous = 0;
        for (int j = 1; j < parts; j++) {
            long target = (long) text.length() * j / parts;
            int at = Arrays.binarySearch(starts, (int) target);
            int best = at >= 0 ? starts[at] : nearest(starts, -at - 1, (int) target);
            if (best - previous >= minPartChars && text.length() - best >= minPartChars) {
                out[n++] = best;
                previous = best;
            }
        }
        return Arrays.copyOf(out, n);
    }

    private static int nearest(int[] sorted, int insertion, int target) {
        if (insertion == 0) {
            return sorted[0];
        }
        if (insertion == sorted.length) {
            return sorted[sorted.length - 1];
        }
        int below = sorted[insertion - 1];
        int above = sorted[insertion];
        return target - below <= above - target ? below : above;
    }

    private static int[] join(FutureTask<int[]> task) {
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while tokenizing", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    private static int[] concat(List<int[]> parts) {
        int total = 0;
        for (int[] p : parts) {
            total += p.length;
        }
        int[] out = new int[total];
        int at = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
