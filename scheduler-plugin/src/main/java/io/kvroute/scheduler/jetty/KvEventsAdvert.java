package io.kvroute.scheduler.jetty;

/**
 * Where an engine's KV-event publisher listens, as SGLang advertises it: rank r publishes on
 * {@code tcp://host:portBase + r}. A KV-event publisher registers this with
 * {@link KvScheduler#registerKvEvents}; until one does, the advert carries only the load endpoints.
 *
 * @param host the bound host; a wildcard ({@code *}, {@code 0.0.0.0}) means "the worker URL's host"
 * @param portBase rank 0's port
 * @param topic the topic frame (may be empty)
 * @param blockSize tokens per KV block (page size)
 * @param replayPortBase rank 0's replay ROUTER port ({@code replay_endpoint_port_base}); 0 = no replay
 */
public record KvEventsAdvert(String host, int portBase, String topic, int blockSize, int replayPortBase) {

    /** A publisher without a replay endpoint. */
    public KvEventsAdvert(String host, int portBase, String topic, int blockSize) {
        this(host, portBase, topic, blockSize, 0);
    }

    public KvEventsAdvert {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("kv events host must not be blank");
        }
        if (portBase < 1 || portBase > 65535) {
            throw new IllegalArgumentException("kv events port base out of range: " + portBase);
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("kv events block size must be >= 1: " + blockSize);
        }
        if (replayPortBase < 0 || replayPortBase > 65535) {
            throw new IllegalArgumentException("kv events replay port base out of range: " + replayPortBase);
        }
        topic = topic == null ? "" : topic;
    }
}
