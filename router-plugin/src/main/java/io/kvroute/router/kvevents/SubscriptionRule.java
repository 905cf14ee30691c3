package io.kvroute.router.kvevents;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.EngineType;
import io.kvroute.protocol.VllmBlockHash;
import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.VllmHashSpec;
import io.kvroute.router.worker.Worker;
import java.util.Locale;

/**
 * Whether, and how, a worker's KV events feed the exact index: the one place that turns what the
 * router knows of a worker (its advert from {@code /server_info} or an operator's template, its
 * engine type, the block size its engine reports on {@code /metrics}) and {@code --kv-events-hash}
 * into a {@link Verdict}. Pure; thread-safe.
 *
 * <p><b>Refusals</b> are loud (the caller logs once and counts
 * {@code kvroute_kv_events_workers_refused_total{reason}}), because each would otherwise show up as
 * a worker that silently never matches:
 * <ul>
 *   <li>{@code bigram_pages}: SGLang with EAGLE-family speculative decoding keys pages by token
 *       bigrams (sgl-project/sglang {@code python/sglang/srt/mem_cache/events.py}).</li>
 *   <li>{@code no_block_size}: an advert without a block size; queries could not be cut into its blocks.</li>
 *   <li>{@code block_size_mismatch}: the advert's (or template's) block size differs from the one the
 *       engine reports ({@code vllm:cache_config_info{block_size}}, vLLM {@code vllm/v1/metrics/loggers.py});
 *       every query would be cut at the wrong boundaries.</li>
 *   <li>{@code engine_hash}: {@code --kv-events-hash engine} for a vLLM worker whose template does not
 *       state a hashing the router reproduces. vLLM chains its block hashes from {@code NONE_HASH}, 32
 *       random bytes per process unless {@code PYTHONHASHSEED} is set, over pickle or CBOR of
 *       {@code (parent, tokens, extra_keys)} (vLLM {@code vllm/v1/core/kv_cache_utils.py}
 *       {@code init_none_hash}, {@code hash_block_tokens}); the router computes that chain
 *       ({@link VllmBlockHash}) only for {@code hash-algo=sha256_cbor} or {@code xxhash_cbor} with a stated
 *       {@code hash-seed}
 *       ({@link VllmHashSpec#unreproducibleReason()}), so other engine keys could never match a query.</li>
 * </ul>
 *
 * <p><b>Hash mode.</b> {@code auto} keys a vLLM worker's blocks by their tokens and every other
 * worker's by the engine's hashes; {@code tokens} and {@code engine} apply to every worker (a vLLM
 * worker is keyed by its engine hashes only when asked with {@code engine} <em>and</em> its template
 * states a reproducible hashing: {@code auto} stays on tokens, which needs no engine settings). With
 * {@code auto} a worker whose engine type is not known yet {@link Verdict.Wait waits}: discovery
 * learns it together with the worker's model, moments later.
 */
public final class SubscriptionRule {

    /** Why a worker is not subscribed; {@link #label()} is the metric's {@code reason}. */
    public enum Refusal {
        BIGRAM_PAGES, NO_BLOCK_SIZE, BLOCK_SIZE_MISMATCH, ENGINE_HASH;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The rule's answer for one worker. */
    public sealed interface Verdict {
        /**
         * Subscribe with these facts.
         *
         * @param vllmHash how a vLLM worker keyed by its engine hashes hashes its blocks (a reproducible
         *        algorithm and the {@code PYTHONHASHSEED}): queries are hashed with {@link VllmBlockHash}; null otherwise
         */
        record Subscribe(KvEventsAdvert advert, KvHashMode hashMode, VllmHashSpec vllmHash) implements Verdict {
            public Subscribe(KvEventsAdvert advert, KvHashMode hashMode) {
                this(advert, hashMode, null);
            }
        }

        /** Refuse loudly. */
        record Refuse(Refusal reason, String message) implements Verdict {}

        /** Nothing to subscribe: the worker advertises no event range (routed by the tree). */
        record None() implements Verdict {}

        /** Not yet: the engine type decides the hash mode and is still unknown. */
        record Wait() implements Verdict {}
    }

    /** Description of {@code kvroute_kv_events_workers_refused_total}, the same wherever the meter is registered. */
    public static final String REFUSED_DESCRIPTION = "Workers not subscribed for the exact index, by reason: bigram_pages "
            + "(an EAGLE-family SGLang engine), no_block_size, block_size_mismatch (template or advert vs the engine's "
            + "/metrics), engine_hash (--kv-events-hash engine on a vLLM worker without hash-algo=sha256_cbor or xxhash_cbor and hash-seed)";

    private final String hashFlag;

    /** @param hashFlag {@code --kv-events-hash}: {@code auto}, {@code engine} or {@code tokens} */
    public SubscriptionRule(String hashFlag) {
        this.hashFlag = requireNonNull(hashFlag, "hashFlag").toLowerCase(Locale.ROOT);
        if (!this.hashFlag.equals("auto") && KvHashMode.parse(this.hashFlag) == null) {
            throw new IllegalArgumentException("hash mode must be auto, engine or tokens, got " + hashFlag);
        }
    }

    /**
     * @param worker the worker as the registry has it
     * @param engineBlockSize the block size its engine reports on {@code /metrics}, or 0 when unknown
     */
    public Verdict decide(Worker worker, int engineBlockSize) {
        KvEventsAdvert advert = worker.kvEvents();
        if (advert == null || advert.eventPortBase() == null) {
            return new Verdict.None();
        }
        if (advert.bigramPages()) {
            return new Verdict.Refuse(Refusal.BIGRAM_PAGES, "it runs speculative decoding "
                    + advert.speculativeAlgorithm() + " (SGLang keys its cache by token bigrams then); its KV events "
                    + "cannot be matched against request tokens");
        }
        if (advert.blockSize() < 1) {
            return new Verdict.Refuse(Refusal.NO_BLOCK_SIZE, "it advertises KV events without a block_size; query "
                    + "hashes could not match its pages");
        }
        if (engineBlockSize > 0 && engineBlockSize != advert.blockSize()) {
            return new Verdict.Refuse(Refusal.BLOCK_SIZE_MISMATCH, "its KV-event template (or advert) says block-size "
                    + advert.blockSize() + " but its engine reports block_size " + engineBlockSize
                    + " on /metrics; fix the template (or the engine's --block-size)");
        }
        EngineType engine = worker.engine();
        KvHashMode mode;
        switch (hashFlag) {
            case "tokens" -> mode = KvHashMode.TOKENS;
            case "engine" -> {
                if (engine == EngineType.VLLM) {
                    VllmHashSpec spec = advert.vllmHash() == null ? new VllmHashSpec(null, null) : advert.vllmHash();
                    String why = spec.unreproducibleReason();
                    if (why != null) {
                        return new Verdict.Refuse(Refusal.ENGINE_HASH, "--kv-events-hash engine cannot compute this "
                                + "vLLM engine's block hashes: " + why + " (or use --kv-events-hash auto or tokens)");
                    }
                    return new Verdict.Subscribe(advert, KvHashMode.ENGINE, spec);
                }
                mode = KvHashMode.ENGINE;
            }
            default -> {
                if (engine == null) {
                    return new Verdict.Wait();
                }
                mode = engine == EngineType.VLLM ? KvHashMode.TOKENS : KvHashMode.ENGINE;
            }
        }
        return new Verdict.Subscribe(advert, mode);
    }
}
