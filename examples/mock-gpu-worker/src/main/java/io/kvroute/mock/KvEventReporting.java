package io.kvroute.mock;

import static java.util.Objects.requireNonNull;

import io.kvroute.mock.engine.CacheEventSink;
import io.kvroute.mock.engine.DataParallelEngine;
import io.kvroute.mock.engine.Engine;
import io.kvroute.mock.lora.LoraSlots;
import io.kvroute.scheduler.jetty.KvEventsAdvert;
import io.kvroute.scheduler.jetty.KvScheduler;
import io.kvroute.scheduler.report.KvEventFormat;
import io.kvroute.scheduler.report.KvEventPublisher;
import java.net.URI;
import java.util.List;
import org.eclipse.jetty.util.component.AbstractLifeCycle;

/**
 * Publishes the mock engine's prefix-cache pages as KV events (SGLang's shape, or vLLM's with
 * {@code --kv-events-format vllm}: {@link KvEventFormat}) through the scheduler plugin's
 * {@link KvEventPublisher}: one PUB and one replay socket per data-parallel rank (a
 * {@link DataParallelEngine}'s rank r publishes as rank r; with fixed ports, rank r on base + r, as
 * vLLM offsets them in {@code vllm/distributed/kv_events.py}). A Jetty lifecycle bean of the worker's server: on start it
 * binds the publisher, feeds it from the engine's prefix cache and registers its range with the
 * {@link KvScheduler}, the one producer of the {@code kv_events} block; on stop it closes the
 * publisher (the server stops before the engine does, as before this was a bean).
 *
 * <p>With a hash seed ({@code --kv-events-hash-seed random}) every published block hash is the
 * SGLang page hash passed through a seeded bijection, the same for parents and removals: the hashes
 * are consistent within this process and unrelated to the tokens for anyone without the seed, as
 * vLLM's are (its chain starts from a per-process random value). A router must then key these
 * blocks by their {@code token_ids} ({@code --kv-events-hash tokens}). A cache flush (the engine's
 * {@code cleared()}) is published as {@code AllBlocksCleared} on every rank.
 *
 * <p>Pages of a LoRA request ({@code --max-loras}) sit in the cache under adapter-salted token ids; in vLLM's
 * format they are published as vLLM does, with the real token ids, {@code lora_id} and {@code lora_name}
 * ({@link LoraSlots#unsalted}), so a router keys them by adapter. SGLang's events carry no adapter (SGLang
 * {@code python/sglang/srt/mem_cache/events.py}: {@code lora_id=None}), so in its format the salted ids stay.
 */
final class KvEventReporting extends AbstractLifeCycle {
    static final String TOPIC = "kv";

    private final String endpoint;
    private final String replayEndpoint;
    private final String host;
    private final Engine engine;
    private final KvScheduler scheduler;
    private final Long hashSeed;
    private final KvEventFormat format;
    /** The worker's adapters ({@code --max-loras}), or null. */
    private final LoraSlots lora;
    private volatile KvEventPublisher publisher;

    /**
     * @param host the host advertised as {@code endpoint_host} (a wildcard means the worker URL's host)
     * @param hashSeed null to publish SGLang's reproducible hashes, else the seed of unreproducible ones
     * @param lora the worker's adapters, or null without {@code --max-loras}
     */
    KvEventReporting(String endpoint, String replayEndpoint, String host, Engine engine, KvScheduler scheduler,
            Long hashSeed, KvEventFormat format, LoraSlots lora) {
        this.endpoint = requireNonNull(endpoint, "endpoint");
        this.replayEndpoint = requireNonNull(replayEndpoint, "replayEndpoint");
        this.host = requireNonNull(host, "host");
        this.engine = requireNonNull(engine, "engine");
        this.scheduler = requireNonNull(scheduler, "scheduler");
        this.hashSeed = hashSeed;
        this.format = requireNonNull(format, "format");
        this.lora = lora;
    }

    @Override
    protected void doStart() {
        List<Engine> rankEngines = engine instanceof DataParallelEngine dp ? dp.ranks() : List.of(engine);
        KvEventPublisher p = KvEventPublisher.bind(endpoint, replayEndpoint, rankEngines.size(), TOPIC,
                KvEventPublisher.Options.defaults().withFormat(format));
        publisher = p;
        for (int r = 0; r < rankEngines.size(); r++) {
            int rank = r;
            // vLLM seeds each engine core's hashes on its own (NONE_HASH per process): so does each rank here
            Long seed = hashSeed == null ? null : hashSeed + 0x632BE59BD9B4E019L * rank;
            rankEngines.get(r).setCacheEventSink(new CacheEventSink() {
                @Override
                public void stored(long[] hashes, Long parentHash, int[] tokens, int pageSize) {
                    Long parent = parentHash == null ? null : published(seed, parentHash);
                    LoraSlots.AdapterPages adapter = lora == null || format != KvEventFormat.VLLM ? null : lora.unsalted(tokens);
                    if (adapter == null) {
                        p.blockStored(rank, published(seed, hashes), parent, tokens, pageSize);
                    } else {
                        // vLLM reports a LoRA request's real token ids with lora_id and lora_name
                        // (vllm/v1/core/block_pool.py cache_full_blocks); the hashes stay the adapter-scoped ones
                        p.blockStored(rank, published(seed, hashes), parent, adapter.tokenIds(), pageSize,
                                adapter.loraId(), adapter.loraName());
                    }
                }

                @Override
                public void removed(long[] hashes) {
                    p.blockRemoved(rank, published(seed, hashes));
                }

                @Override
                public void cleared() {
                    p.allBlocksCleared(rank);
                }
            });
        }
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

    /** The bound event endpoints, one per rank (empty before start). */
    List<String> endpoints() {
        KvEventPublisher p = publisher;
        return p == null ? List.of() : p.endpoints();
    }

    /** The bound replay endpoints, one per rank (empty before start). */
    List<String> replayEndpoints() {
        KvEventPublisher p = publisher;
        return p == null ? List.of() : p.replayEndpoints();
    }

    private static long[] published(Long seed, long[] hashes) {
        if (seed == null) {
            return hashes;
        }
        long[] out = new long[hashes.length];
        for (int i = 0; i < hashes.length; i++) {
            out[i] = published(seed, hashes[i]);
        }
        return out;
    }

    /** The seeded hash times an odd constant: a bijection, so distinct pages keep distinct hashes. */
    private static long published(Long seed, long hash) {
        return seed == null ? hash : (hash ^ seed) * 0x9E3779B97F4A7C15L;
    }

    private static int port(String endpoint) {
        return URI.create(endpoint).getPort();
    }
}
