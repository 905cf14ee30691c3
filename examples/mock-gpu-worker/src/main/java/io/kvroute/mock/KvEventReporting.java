package io.kvroute.mock;

import static java.util.Objects.requireNonNull;

import io.kvroute.mock.engine.CacheEventSink;
import io.kvroute.mock.engine.Engine;
import io.kvroute.scheduler.jetty.KvEventsAdvert;
import io.kvroute.scheduler.jetty.KvScheduler;
import io.kvroute.scheduler.report.KvEventPublisher;
import java.net.URI;
import org.eclipse.jetty.util.component.AbstractLifeCycle;

/**
 * Publishes the mock engine's prefix-cache pages as SGLang KV events through the scheduler plugin's
 * {@link KvEventPublisher} (one rank). A Jetty lifecycle bean of the worker's server: on start it
 * binds the publisher, feeds it from the engine's prefix cache and registers its range with the
 * {@link KvScheduler}, the one producer of the {@code kv_events} block; on stop it closes the
 * publisher (the server stops before the engine does, as before this was a bean).
 */
final class KvEventReporting extends AbstractLifeCycle {
    static final String TOPIC = "kv";

    private final String endpoint;
    private final String replayEndpoint;
    private final String host;
    private final Engine engine;
    private final KvScheduler scheduler;
    private volatile KvEventPublisher publisher;

    /** @param host the host advertised as {@code endpoint_host} (a wildcard means the worker URL's host) */
    KvEventReporting(String endpoint, String replayEndpoint, String host, Engine engine, KvScheduler scheduler) {
        this.endpoint = requireNonNull(endpoint, "endpoint");
        this.replayEndpoint = requireNonNull(replayEndpoint, "replayEndpoint");
        this.host = requireNonNull(host, "host");
        this.engine = requireNonNull(engine, "engine");
        this.scheduler = requireNonNull(scheduler, "scheduler");
    }

    @Override
    protected void doStart() {
        KvEventPublisher p = KvEventPublisher.bind(endpoint, replayEndpoint, 1, TOPIC, KvEventPublisher.Options.defaults());
        publisher = p;
        engine.setCacheEventSink(new CacheEventSink() {
            @Override
            public void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize) {
                p.blockStored(0, hashes, parentHash, tokens, pageSize);
            }

            @Override
            public void removed(long[] hashes) {
                p.blockRemoved(0, hashes);
            }

            @Override
            public void cleared() {
                p.allBlocksCleared(0);
            }
        });
        scheduler.registerKvEvents(new KvEventsAdvert(host, port(p.endpoints().get(0)), TOPIC,
                engine.info().pageSize(), port(p.replayEndpoints().get(0))));
    }

    @Override
    protected void doStop() {
        KvEventPublisher p = publisher;
        if (p != null) {
            p.close();
        }
    }

    private static int port(String endpoint) {
        return URI.create(endpoint).getPort();
    }
}
