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

    /**
     * Router flags that locate the workers' KV events when they serve no {@code /server_info}
     * ({@code --engine-api vllm}): {@code --kv-events-worker-templates} with each worker's ports; empty
     * otherwise. The fleet's own router has them; a scenario starting more routers adds them.
     */
    default List<String> kvEventTemplateArgs() {
        return List.of();
    }
}
