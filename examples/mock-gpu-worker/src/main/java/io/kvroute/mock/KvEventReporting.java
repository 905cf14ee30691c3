package io.kvroute.mock;

import io.kvroute.mock.engine.CacheEventSink;
import io.kvroute.mock.engine.Engine;
import io.kvroute.scheduler.report.KvEventPublisher;
import java.util.Map;

/**
 * Publishes the mock engine's prefix-cache pages as SGLang KV events through the scheduler plugin's
 * {@link KvEventPublisher} (one rank), and fills the event part of the {@code kv_events} block.
 */
final class KvEventReporting implements AutoCloseable {
    static final String TOPIC = "kv";

    private final KvEventPublisher publisher;

    KvEventReporting(String endpoint, String replayEndpoint, Engine engine) {
        this.publisher = KvEventPublisher.bind(endpoint, replayEndpoint, 1, TOPIC, KvEventPublisher.Options.defaults());
        engine.setCacheEventSink(new CacheEventSink() {
            @Override
            public void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize) {
                publisher.blockStored(0, hashes, parentHash, tokens, pageSize);
            }

            @Override
            public void removed(long[] hashes) {
                publisher.blockRemoved(0, hashes);
            }

            @Override
            public void cleared() {
                publisher.allBlocksCleared(0);
            }
        });
    }

    /** Adds {@code endpoint_port_base}, {@code topic} and {@code replay_endpoint_port_base} to a block. */
    void describe(Map<String, Object> block) {
        block.put("endpoint_port_base", KvEventsBlock.port(publisher.endpoints().get(0)));
        block.put("topic", TOPIC);
        block.put("replay_endpoint_port_base", KvEventsBlock.port(publisher.replayEndpoints().get(0)));
    }

    @Override
    public void close() {
        publisher.close();
    }
}
