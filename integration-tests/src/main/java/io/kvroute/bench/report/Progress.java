package io.kvroute.bench.report;

/**
 * Progress of one variant's requests. A progress bar (me.tongfei:progressbar) when attached to a
 * terminal, plain lines otherwise ({@code System.console() == null}, e.g. CI logs or pipes).
 *
 * <p>Threading: {@link #step()} is thread-safe (called from HTTP client threads).
 */
public interface Progress extends AutoCloseable {

    /** One more request finished. */
    void step();

    @Override
    void close();

    /** Creates a progress display for a task of {@code total} steps. */
    @FunctionalInterface
    interface Factory {
        Progress start(String label, int total);
    }

    /** Progress bar on a terminal, plain lines otherwise. */
    static Factory auto() {
        return System.console() != null ? TerminalProgress::new : (label, total) -> new PlainProgress(label, total, System.err);
    }

    /** Shows nothing (tests). */
    static Factory silent() {
        return (label, total) -> new Progress() {
            @Override
            public void step() {}

            @Override
            public void close() {}
        };
    }
}
