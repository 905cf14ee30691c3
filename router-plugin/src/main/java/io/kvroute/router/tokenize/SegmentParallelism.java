package io.kvroute.router.tokenize;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many threads may tokenize one chat prompt's segments at once, and the bounded pool that lends the
 * extra ones (see {@link SegmentParallelEncoder}). Created once per router and handed to
 * {@link TokenizerRegistry#load}, which closes it with itself; no thread is ever created per request.
 *
 * <p>The pool has {@code threads - 1} daemon workers (the request's own thread is the last one) and a
 * queue of {@code 4 * threads} parts; a part the pool refuses is tokenized by the request's thread, so a
 * busy pool costs parallelism, never a wait behind other requests' queued parts.
 */
public final class SegmentParallelism implements AutoCloseable {

    /** One thread per prompt: the whole prompt in one call, on the request's thread. */
    public static final SegmentParallelism NONE = new SegmentParallelism(1, null, null, SegmentParallelEncoder.DEFAULT_MIN_PART_CHARS);

    private final int threads;
    private final Executor executor;
    private final ThreadPoolExecutor owned;
    private final int minPartChars;

    private SegmentParallelism(int threads, Executor executor, ThreadPoolExecutor owned, int minPartChars) {
        this.threads = threads;
        this.executor = executor;
        this.owned = owned;
        this.minPartChars = minPartChars;
    }

    /**
     * @param threads threads per prompt, the request's own included; 1 = off (no pool)
     * @throws IllegalArgumentException when {@code threads} is not in 1..64
     */
    public static SegmentParallelism ofThreads(int threads) {
        if (threads < 1 || threads > 64) {
            throw new IllegalArgumentException("threads must be in 1..64: " + threads);
        }
        if (threads == 1) {
            return NONE;
        }
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads - 1, threads - 1, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(4 * threads), r -> {
                    Thread t = new Thread(r, "kvroute-tokenize-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        return new SegmentParallelism(threads, pool, pool, SegmentParallelEncoder.DEFAULT_MIN_PART_CHARS);
    }

    /** Over an executor the caller owns and closes (a test's); {@link #close} leaves it alone. */
    public static SegmentParallelism over(Executor executor, int threads) {
        return over(executor, threads, SegmentParallelEncoder.DEFAULT_MIN_PART_CHARS);
    }

    /** As {@link #over(Executor, int)}, cutting parts as short as {@code minPartChars} (tests cut short chats). */
    static SegmentParallelism over(Executor executor, int threads, int minPartChars) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        return new SegmentParallelism(threads, java.util.Objects.requireNonNull(executor, "executor"), null, minPartChars);
    }

    int minPartChars() {
        return minPartChars;
    }

    public int threads() {
        return threads;
    }

    /** Null when {@link #threads} is 1. */
    Executor executor() {
        return executor;
    }

    @Override
    public void close() {
        if (owned != null) {
            owned.shutdownNow();
        }
    }
}
