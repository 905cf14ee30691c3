package io.kvroute.router.dispatch;

/** An in-flight client request the drain can abort with a clear error. */
public interface Abortable {
    void abort(String reason);
}
