package io.kvroute.router.plugin;

import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.kvevents.ExactCacheIndex;
import io.kvroute.router.kvevents.KvEventsConfig;
import io.kvroute.router.kvevents.KvEventsPlane;
import io.kvroute.router.kvevents.KvHashMode;
import io.kvroute.router.policy.CacheAwarePolicy;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.Worker;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connects the router's {@code --cache-index} to the KV-event plane: builds the plane (unless
 * {@code approximate}), hands every cache-aware policy the exact index, and subscribes each worker
 * whose {@code /server_info} advertises an event range, keyed the
 * {@code --kv-events-hash} way (the advert cannot tell: see {@link KvHashMode}).
 */
final class KvEventsWiring {
    private static final Logger LOG = LoggerFactory.getLogger(KvEventsWiring.class);

    private KvEventsWiring() {}

    static KvEventsPlane create(RouterConfig config, MeterRegistry registry, Collection<CacheAwarePolicy> policies) {
        String mode = config.kvEvents().cacheIndex().toLowerCase(Locale.ROOT);
        if (mode.equals("approximate")) {
            return null;
        }
        KvEventsPlane plane = new KvEventsPlane(KvEventsConfig.defaults()
                .withSilence(Duration.ofMillis(config.kvEvents().silenceMillis()))
                .withMaxBlocksPerRank(config.kvEvents().maxBlocksPerRank())
                .withHashMode(KvHashMode.parse(config.kvEvents().hash())), System::nanoTime, registry, null);
        ExactCacheIndex exact = new ExactCacheIndex(plane);
        for (CacheAwarePolicy p : policies) {
            p.useExactIndex(exact, mode.equals("exact"));
        }
        return plane;
    }

    /** Subscribes {@code worker}'s advertised event range; a worker without one is routed by the tree. */
    static void subscribe(KvEventsPlane plane, Worker worker) {
        KvEventsAdvert advert = worker.kvEvents();
        if (plane == null || advert == null || advert.eventPortBase() == null) {
            return;
        }
        if (advert.bigramPages()) {
            plane.refuseBigramWorker();
            LOG.error("worker {} runs speculative decoding {} (SGLang keys its cache by token bigrams then); its KV "
                    + "events cannot be matched against request tokens, so it is not subscribed and gets no exact "
                    + "matches (kvroute_kv_events_workers_refused_total{reason=\"bigram_pages\"})",
                    worker.url(), advert.speculativeAlgorithm());
            return;
        }
        if (advert.blockSize() < 1) {
            LOG.error("worker {} advertises KV events without a block_size; not subscribing (query hashes could "
                    + "not match its pages)", worker.url());
            return;
        }
        String host = worker.host();
        plane.addWorker(worker.id(), worker.url(), worker.modelId(), advert.eventEndpoints(host),
                advert.replayEndpoints(host), advert.topic(), advert.blockSize(), plane.config().hashMode());
    }
}
