package io.kvroute.bench.fleet;

import java.util.List;

/**
 * A running router plus mock GPU workers, in process, on ephemeral loopback ports. Closing it
 * stops every server it started.
 */
public interface Fleet extends AutoCloseable {

    /** Base URL of the router, e.g. {@code http://127.0.0.1:41234} (no trailing slash). */
    String routerUrl();

    /** Base URLs of the workers, in start order. */
    List<String> workerUrls();
}
