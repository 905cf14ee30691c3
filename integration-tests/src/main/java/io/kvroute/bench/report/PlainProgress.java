package io.kvroute.bench.report;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Plain progress lines for non-terminals: one line per 10% of the total (at most 11 lines per
 * task), so logs stay short. Thread-safe: a counter and a CAS on the last printed decile.
 */
final class PlainProgress implements Progress {

    private final String label;
    private final int total;
    private final PrintStream out;
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicInteger lastDecile = new AtomicInteger(0);
    private final long startNanos = System.nanoTime();
    private int lastPrintedDecile; // guarded by this

    PlainProgress(String label, int total, PrintStream out) {
        this.label = label;
        this.total = total;
        this.out = out;
        out.printf("[%s] started: %d requests%n", label, total);
    }

    @Override
    public void step() {
        int now = done.incrementAndGet();
        int decile = total == 0 ? 10 : (int) (10L * now / total);
        int previous = lastDecile.get();
        if (decile > previous && decile < 10 && lastDecile.compareAndSet(previous, decile)) {
            printLine(now, decile);
        }
    }

    /** Serialized so lines appear in decile order even when two threads cross deciles together. */
    private synchronized void printLine(int now, int decile) {
        if (decile >= lastPrintedDecile) {
            lastPrintedDecile = decile;
            out.printf("[%s] %d/%d (%d%%) after %.1f s%n", label, now, total, 100L * now / Math.max(1, total),
                    (System.nanoTime() - startNanos) / 1e9);
        }
    }

    @Override
    public void close() {
        out.printf("[%s] done: %d/%d in %.1f s%n", label, done.get(), total, (System.nanoTime() - startNanos) / 1e9);
    }
}
