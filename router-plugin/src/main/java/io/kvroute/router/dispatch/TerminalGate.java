package io.kvroute.router.dispatch;

/**
 * The one-way door of a client exchange: exactly one terminal action (the last write, an error
 * answer, or giving up on a gone client) ever runs, and it never overlaps a relay write still in
 * flight (Jetty allows one pending write per response; a second is a {@code WritePendingException}
 * and a lost answer).
 *
 * <p>States: OPEN, WRITING (a relay write in flight), CLOSED. {@link #beginWrite} moves OPEN to
 * WRITING and is refused once CLOSED; {@link #claim} closes the gate and runs its action at once, or,
 * when a write is in flight, parks it until {@link #endWrite} hands it back to the writer. Every
 * transition is made under one lock that guards no I/O: actions run after it is released.
 *
 * <p>Thread-safe. A claimed action runs exactly once, on the claiming thread or on the thread that
 * ends the in-flight write.
 */
final class TerminalGate {

    private boolean closed; // guarded by this
    private boolean writing; // guarded by this
    private Runnable parked; // guarded by this

    /** Starts a relay write; false once the exchange is terminal (the bytes must then be dropped). */
    synchronized boolean beginWrite() {
        if (closed) {
            return false;
        }
        if (writing) {
            throw new IllegalStateException("a relay write is already in flight");
        }
        writing = true;
        return true;
    }

    /** Ends the relay write begun last; runs the terminal action parked meanwhile, if any. */
    void endWrite() {
        Runnable action;
        synchronized (this) {
            writing = false;
            action = parked;
            parked = null;
        }
        if (action != null) {
            action.run();
        }
    }

    /**
     * Makes {@code action} the exchange's terminal transition. Returns false, without running it,
     * when another terminal transition was claimed first.
     */
    boolean claim(Runnable action) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
            if (writing) {
                parked = action;
                return true;
            }
        }
        action.run();
        return true;
    }

    synchronized boolean isClosed() {
        return closed;
    }
}
