package io.kvroute.router.http;

/** An in-flight client request the drain can abort with a clear error. */
interface Abortable {
    void abort(String reason);
}
