package io.kvroute.router.config;

/**
 * The exact KV index fed by the engines' KV events: when a silent publisher is reported and
 * resubscribed, how many blocks one engine rank may hold, and how blocks are keyed. Handed to the
 * KV-events plane by {@code plugin/KvEventsWiring}.
 */
public record KvEventsSettings(
        @Setting(name = "cache-index", defaultValue = "auto", choices = {"auto", "exact", "approximate"},
                description = "Where cache_aware learns what each worker has cached: exact (the engines' KV events; workers "
                        + "without live events count as holding nothing), approximate (the router's own prefix tree), auto "
                        + "(exact for workers whose events are live, the tree for the rest)")
        String cacheIndex,
        @Setting(name = "kv-events-silence-secs", defaultValue = "60", positive = true,
                description = "A worker's KV-event publisher silent this long is reported (kvroute_kv_events_silences_total, "
                        + "a warning, kvroute_kv_events_publisher_silent{worker,rank} = 1 while it lasts) and resubscribed")
        double silenceSecs,
        @Setting(name = "kv-events-max-blocks-per-rank", defaultValue = "1048576", min = 1,
                description = "Blocks the exact index keeps per engine dp rank; stores beyond are refused; in tokens mode "
                        + "also bounds each rank's engine-to-own hash map")
        int maxBlocksPerRank,
        @Setting(name = "kv-events-hash", defaultValue = "engine", choices = {"engine", "tokens"},
                description = "How the exact index keys KV-event blocks: engine (the engine's own block hashes, reproducible "
                        + "for SGLang), tokens (the router's own chained hash of each event's token_ids, for engines with "
                        + "unreproducible hashes such as vLLM's per-process seed); /server_info cannot tell which applies "
                        + "(SGLang's kv_events block has no hash field), so it is a flag")
        String hash) {

    public static final KvEventsSettings DEFAULTS = SettingsBinder.defaults(KvEventsSettings.class);

    public long silenceMillis() {
        return (long) (silenceSecs * 1000);
    }
}
