package io.kvroute.router.config;

import io.kvroute.router.worker.KvEventsTemplates;
import java.util.List;

/**
 * The exact KV index fed by the engines' KV events: when a silent publisher is reported and
 * resubscribed, how many blocks one engine rank may hold, how blocks are keyed, and where the
 * publishers of workers that advertise none (vLLM) are: a default template, per-URL templates and the
 * pod annotation that holds one (see {@code worker/KvEventsTemplate}). Handed to the KV-events plane
 * by {@code plugin/KvEventsWiring}; the templates also to discovery.
 */
public record KvEventsSettings(
        @Setting(name = "cache-index", defaultValue = "auto", choices = {"auto", "exact", "approximate"},
                description = "Where cache_aware learns what each worker has cached: exact (the engines' KV events; workers "
                        + "without live events count as holding nothing), approximate (the router's own prefix tree), auto "
                        + "(exact for workers whose events are live, the tree for the rest)")
        String cacheIndex,
        @Setting(name = "cache-index-inflight-grace-ms", defaultValue = "10000", min = 0, max = 600_000,
                description = "auto: a worker the router sent a prompt prefix to within this many ms keeps the prefix "
                        + "tree's claim while its exact answer is below --cache-affinity-min-matched-tokens (engines "
                        + "publish blocks only once computed, so a conversation's next turn arriving while the previous "
                        + "one still waits or prefills finds nothing in the exact index); 0 = the exact answer always wins")
        long inflightGraceMillis,
        @Setting(name = "kv-events-silence-secs", defaultValue = "60", positive = true,
                description = "A worker's KV-event publisher silent this long is reported (kvroute_kv_events_silences_total, "
                        + "a warning, kvroute_kv_events_publisher_silent{worker,rank} = 1 while it lasts) and resubscribed")
        double silenceSecs,
        @Setting(name = "kv-events-max-blocks-per-rank", defaultValue = "1048576", min = 1,
                description = "Blocks the exact index keeps per engine dp rank; stores beyond are refused; in tokens mode "
                        + "also bounds each rank's engine-to-own hash map")
        int maxBlocksPerRank,
        @Setting(name = "kv-events-hash", defaultValue = "auto", choices = {"auto", "engine", "tokens"},
                description = "How the exact index keys KV-event blocks: engine (the engine's own block hashes, reproducible "
                        + "for SGLang), tokens (the router's own chained hash of each event's token_ids, for engines with "
                        + "unreproducible hashes such as vLLM's per-process seed), auto (tokens for vLLM workers, engine for "
                        + "the rest); engine keys a vLLM worker by vLLM's own hashes only when its template states "
                        + "hash-algo=sha256_cbor or xxhash_cbor and hash-seed=<the engines' PYTHONHASHSEED>, and refuses it otherwise "
                        + "(kvroute_kv_events_workers_refused_total{reason=\"engine_hash\"})")
        String hash,
        @Setting(name = "kv-events-lower-tier-weight", defaultValue = "0", min = 0, max = 1,
                description = "The fraction of a hit a block counts for in the exact index when the engine holds it on a "
                        + "lower tier (a KV-event medium other than GPU: vLLM's CPU offload, disk) right after the request's "
                        + "GPU prefix, as Dynamo's --router-host-cache-hit-weight; 0 = lower-tier events are ignored "
                        + "(kvroute_kv_events_ignored_total{reason=\"medium\"})")
        double lowerTierWeight,
        @Setting(name = "kv-events-template", defaultValue = Setting.UNSET,
                description = "KV-event endpoints of every worker whose /server_info advertises none (vLLM), in the words "
                        + "of vLLM's --kv-events-config: endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;topic=kv;"
                        + "block-size=16;dp-size=2 (rank r on port + r; * or {host} is the worker URL's host; "
                        + "dp-hosts=2-3@HOST puts ranks 2-3 on another host, as vLLM's --headless nodes; dp-start-rank=S for a node "
                        + "serving ranks S.. at its own URL, vLLM's hybrid load balancing; hash-algo=sha256_cbor|xxhash_cbor;hash-seed=N "
                        + "state vLLM's --prefix-caching-hash-algo and PYTHONHASHSEED for --kv-events-hash engine). A "
                        + "/server_info kv_events block wins over it. Unset = no template")
        String template,
        @Setting(name = "kv-events-worker-templates", defaultValue = Setting.UNSET,
                description = "Per-worker KV-event templates, URL=TEMPLATE comma separated (TEMPLATE as for "
                        + "--kv-events-template); they win over --kv-events-template. Unset = none")
        List<String> workerTemplates,
        @Setting(name = "kv-events-annotation", defaultValue = KvEventsTemplates.DEFAULT_ANNOTATION,
                description = "Service discovery: pod annotation holding the pod's KV-event template (as for "
                        + "--kv-events-template); it wins over --kv-events-template")
        String annotation) {

    public KvEventsSettings {
        workerTemplates = workerTemplates == null ? List.of() : List.copyOf(workerTemplates);
        try {
            KvEventsTemplates.parse(template, List.of());
        } catch (IllegalArgumentException e) {
            throw ConfigValidator.fail("--kv-events-template", template, e.getMessage());
        }
        try {
            KvEventsTemplates.parse(null, workerTemplates);
        } catch (IllegalArgumentException e) {
            throw ConfigValidator.fail("--kv-events-worker-templates", String.join(",", workerTemplates), e.getMessage());
        }
        if (annotation.isBlank()) {
            throw ConfigValidator.fail("--kv-events-annotation", annotation, "must not be empty");
        }
    }

    /** The parsed {@code --kv-events-template} and {@code --kv-events-worker-templates}. */
    public KvEventsTemplates templates() {
        return KvEventsTemplates.parse(template, workerTemplates);
    }

    public static final KvEventsSettings DEFAULTS = SettingsBinder.defaults(KvEventsSettings.class);

    public long silenceMillis() {
        return (long) (silenceSecs * 1000);
    }
}
