package io.kvroute.router.worker;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A worker's KV-event endpoints stated by the operator, for engines that advertise none: vLLM serves
 * no {@code /server_info} in production (only with {@code VLLM_SERVER_DEV_MODE=1}, vLLM
 * {@code vllm/entrypoints/serve/dev/server_info/api_router.py}), so its publisher's address is what
 * its {@code --kv-events-config} says. The template uses that config's words, so the two can be
 * copied from each other:
 * <pre>endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;topic=kv@qwen3;block-size=16;dp-size=2</pre>
 * {@code endpoint} is rank 0's PUB socket; rank {@code r} publishes on its port + r, as vLLM offsets
 * every data-parallel rank's endpoints ({@code vllm/distributed/kv_events.py},
 * {@code ZmqEventPublisher.offset_endpoint_port}); {@code replay-endpoint} likewise for the replay
 * ROUTER (optional: without it a gap cannot be replayed). The host may be a wildcard ({@code *},
 * {@code 0.0.0.0}, {@code ::}) or {@code {host}}, both meaning the host of the worker's URL (the pod
 * IP under Kubernetes discovery), or a fixed name. {@code topic} defaults to empty (everything),
 * {@code block-size} must be given (vLLM's default is 16; a wrong one would zero every match, so the
 * router compares it with {@code vllm:cache_config_info} once it scrapes the engine), {@code dp-size}
 * defaults to 1.
 *
 * <p><b>Ranks on several hosts.</b> With vLLM's multi-node data parallelism ({@code --data-parallel-size N
 * --data-parallel-size-local M} on the head node, {@code --headless --data-parallel-start-rank S} on the
 * others) one URL serves N ranks, each binding its sockets on the node it runs on, at port base +
 * its <em>global</em> rank: vLLM's scheduler creates the publisher with
 * {@code parallel_config.data_parallel_index} ({@code vllm/v1/core/sched/scheduler.py}), which
 * {@code offset_endpoint_port} adds to the port. {@code dp-hosts=S-E@HOST,...} names the host of
 * those ranks (one entry per headless node, {@code R@HOST} for one rank); ranks not named are on
 * {@code endpoint}'s host (the head node):
 * <pre>endpoint=tcp://*:5557;block-size=16;dp-size=4;dp-hosts=2-3@10.0.0.12</pre>
 *
 * <p><b>A node serving ranks S..S+K-1 at its own URL</b> (vLLM's hybrid load balancing,
 * {@code --data-parallel-hybrid-lb --data-parallel-size-local K --data-parallel-start-rank S}, or one
 * pod per rank with {@code --data-parallel-rank S}): its ranks publish at port base + their global
 * rank, as above, so {@code dp-start-rank=S} with {@code dp-size=K} subscribes ports base + S .. base +
 * S + K - 1 from the same {@code --kv-events-config} every node runs. The rank a request is pinned to
 * with {@code X-data-parallel-rank} stays the <em>local</em> index 0..K-1: that URL's API server
 * manages only its local engines, in rank order ({@code vllm/v1/engine/core_client.py}, {@code MPClient}
 * {@code engine_ranks_managed} = {@code range(data_parallel_index, data_parallel_index + local size)}
 * when {@code local_engines_only}), picks {@code core_engines[data_parallel_rank]} in
 * {@code DPLBAsyncMPClient.get_core_engine_for_request}, and refuses a rank outside
 * {@code [0, local size)} ({@code vllm/v1/engine/input_processor.py}, {@code process_inputs}). So the
 * offset moves the sockets, never the header:
 * <pre>endpoint=tcp://*:5557;replay-endpoint=tcp://*:5600;block-size=16;dp-size=2;dp-start-rank=2</pre>
 *
 * <p><b>vLLM's block hashes.</b> {@code hash-algo} and {@code hash-seed} state vLLM's
 * {@code --prefix-caching-hash-algo} and the {@code PYTHONHASHSEED} every engine and rank runs with, so
 * that {@code --kv-events-hash engine} can compute the engine's own block hashes ({@link VllmHashSpec}):
 * <pre>endpoint=tcp://*:5557;block-size=16;hash-algo=sha256_cbor;hash-seed=42</pre>
 *
 * <p>{@link #advert()} turns the template into the same {@link KvEventsAdvert} SGLang's
 * {@code /server_info} gives, so the KV-event plane treats both alike; an advert from
 * {@code /server_info} replaces the template's when the worker has both. Immutable; {@link #parse}
 * throws {@link IllegalArgumentException} naming the part it cannot use.
 *
 * @param host the endpoints' host as written ({@code *} for a wildcard or {@code {host}})
 * @param eventPortBase rank 0's PUB port
 * @param replayPortBase rank 0's replay port, or null
 * @param topic the KV-event topic ("" = every message)
 * @param blockSize tokens per KV block
 * @param dpSize data-parallel ranks, one publisher each
 * @param rankHosts the host of each rank ({@code *} = the worker URL's host) when {@code dp-hosts}
 *     spreads them over several hosts, else empty
 * @param dpStartRank the global rank of this URL's first rank ({@code --data-parallel-start-rank}): its
 *     sockets are at the bases + this + the local rank; 0 unless the node serves ranks from S on
 * @param vllmHash {@code hash-algo} and {@code hash-seed}: vLLM's {@code --prefix-caching-hash-algo} and
 *     the engines' {@code PYTHONHASHSEED}, which {@code --kv-events-hash engine} needs to compute the
 *     engine's block hashes ({@link VllmHashSpec}); null when neither is stated
 */
public record KvEventsTemplate(String host, int eventPortBase, Integer replayPortBase, String topic, int blockSize,
                               int dpSize, List<String> rankHosts, int dpStartRank, VllmHashSpec vllmHash) {

    /** A template that states no vLLM hashing. */
    public KvEventsTemplate(String host, int eventPortBase, Integer replayPortBase, String topic, int blockSize,
            int dpSize, List<String> rankHosts, int dpStartRank) {
        this(host, eventPortBase, replayPortBase, topic, blockSize, dpSize, rankHosts, dpStartRank, null);
    }

    /** A template whose ranks all run on {@code host}. */
    public KvEventsTemplate(String host, int eventPortBase, Integer replayPortBase, String topic, int blockSize,
            int dpSize) {
        this(host, eventPortBase, replayPortBase, topic, blockSize, dpSize, List.of(), 0, null);
    }

    public KvEventsTemplate(String host, int eventPortBase, Integer replayPortBase, String topic, int blockSize,
            int dpSize, List<String> rankHosts) {
        this(host, eventPortBase, replayPortBase, topic, blockSize, dpSize, rankHosts, 0, null);
    }

    /** Largest block size accepted (vLLM's largest supported block size is 256; room for forks). */
    public static final int MAX_BLOCK_SIZE = 65536;

    public KvEventsTemplate {
        Objects.requireNonNull(host, "host");
        topic = topic == null ? "" : topic;
        if (blockSize < 1 || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block-size must be 1.." + MAX_BLOCK_SIZE + ", got " + blockSize);
        }
        rankHosts = rankHosts == null ? List.of() : List.copyOf(rankHosts);
        if (dpStartRank < 0 || dpStartRank > KvEventsAdvert.MAX_DP_SIZE) {
            throw new IllegalArgumentException("dp-start-rank must be 0.." + KvEventsAdvert.MAX_DP_SIZE + ", got "
                    + dpStartRank);
        }
        if (dpStartRank > 0 && !rankHosts.isEmpty()) {
            // dp-hosts places the ranks of one URL serving all of them; a start rank means this URL serves its own
            throw new IllegalArgumentException("dp-start-rank and dp-hosts cannot be combined: a node serving ranks "
                    + "from dp-start-rank on runs them all on its own host");
        }
        int lastOffset = dpStartRank + dpSize - 1;
        if (eventPortBase + lastOffset > 65535 || replayPortBase != null && replayPortBase + lastOffset > 65535) {
            throw new IllegalArgumentException("port range from the bases + dp-start-rank " + dpStartRank
                    + " over dp-size " + dpSize + " ranks does not fit 1..65535");
        }
        // checks dp size
        advert(host, eventPortBase, replayPortBase, topic, blockSize, dpSize, rankHosts, dpStartRank, vllmHash);
    }

    /** The template as an advert whose wildcard host means the worker URL's host. */
    public KvEventsAdvert advert() {
        return advert(host, eventPortBase, replayPortBase, topic, blockSize, dpSize, rankHosts, dpStartRank, vllmHash);
    }

    /** Local rank r's sockets are at the bases + the start rank + r (vLLM offsets ports by the global rank). */
    private static KvEventsAdvert advert(String host, int eventPortBase, Integer replayPortBase, String topic,
            int blockSize, int dpSize, List<String> rankHosts, int dpStartRank, VllmHashSpec vllmHash) {
        return new KvEventsAdvert(host, eventPortBase + dpStartRank, topic, blockSize, dpSize, null, null,
                replayPortBase == null ? null : replayPortBase + dpStartRank, null, rankHosts, vllmHash);
    }

    /**
     * Parses {@code key=value} parts separated by {@code ;}: {@code endpoint} (required),
     * {@code replay-endpoint}, {@code topic}, {@code block-size} (required), {@code dp-size},
     * {@code dp-hosts}, {@code dp-start-rank}, {@code hash-algo}, {@code hash-seed}. Keys are
     * case-insensitive and {@code _} may stand for {@code -} (vLLM writes {@code replay_endpoint}).
     */
    public static KvEventsTemplate parse(String text) {
        Objects.requireNonNull(text, "text");
        Map<String, String> parts = new LinkedHashMap<>();
        for (String part : text.split(";")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + p + "' is not key=value");
            }
            String key = p.substring(0, eq).trim().toLowerCase(Locale.ROOT).replace('_', '-');
            if (!key.equals("endpoint") && !key.equals("replay-endpoint") && !key.equals("topic")
                    && !key.equals("block-size") && !key.equals("dp-size") && !key.equals("dp-hosts")
                    && !key.equals("dp-start-rank") && !key.equals("hash-algo") && !key.equals("hash-seed")) {
                throw new IllegalArgumentException("unknown key '" + key + "' (endpoint, replay-endpoint, topic, "
                        + "block-size, dp-size, dp-hosts, dp-start-rank, hash-algo, hash-seed)");
            }
            if (parts.put(key, p.substring(eq + 1).trim()) != null) {
                throw new IllegalArgumentException("'" + key + "' given twice");
            }
        }
        String endpoint = parts.get("endpoint");
        if (endpoint == null || endpoint.isEmpty()) {
            throw new IllegalArgumentException("endpoint is required (e.g. endpoint=tcp://*:5557)");
        }
        String blockSize = parts.get("block-size");
        if (blockSize == null) {
            throw new IllegalArgumentException("block-size is required (vLLM's default is 16)");
        }
        String[] hostPort = hostPort("endpoint", endpoint);
        Integer replayPort = null;
        String replay = parts.get("replay-endpoint");
        if (replay != null && !replay.isEmpty()) {
            String[] replayHostPort = hostPort("replay-endpoint", replay);
            if (!replayHostPort[0].equals(hostPort[0])) {
                throw new IllegalArgumentException("replay-endpoint host '" + replayHostPort[0]
                        + "' differs from endpoint host '" + hostPort[0] + "'");
            }
            replayPort = Integer.parseInt(replayHostPort[1]);
        }
        int dpSize = parts.containsKey("dp-size") ? number("dp-size", parts.get("dp-size")) : 1;
        if (dpSize < 1 || dpSize > KvEventsAdvert.MAX_DP_SIZE) {
            throw new IllegalArgumentException("dp-size must be 1.." + KvEventsAdvert.MAX_DP_SIZE + ", got " + dpSize);
        }
        List<String> rankHosts = parts.containsKey("dp-hosts")
                ? rankHosts(parts.get("dp-hosts"), hostPort[0], dpSize) : List.of();
        int dpStartRank = parts.containsKey("dp-start-rank") ? number("dp-start-rank", parts.get("dp-start-rank")) : 0;
        VllmHashSpec vllmHash = parts.containsKey("hash-algo") || parts.containsKey("hash-seed")
                ? new VllmHashSpec(parts.get("hash-algo"), parts.get("hash-seed")) : null;
        KvEventsTemplate t = new KvEventsTemplate(hostPort[0], Integer.parseInt(hostPort[1]), replayPort,
                parts.get("topic"), number("block-size", blockSize), dpSize, rankHosts, dpStartRank, vllmHash);
        if (replayPort != null && rangesOverlap(t.eventPortBase, replayPort, dpSize)) {
            // vLLM binds both ranges on the engine's host: rank 1's PUB would collide with rank 0's replay
            throw new IllegalArgumentException("endpoint ports " + t.eventPortBase + ".." + (t.eventPortBase + dpSize - 1)
                    + " and replay-endpoint ports " + replayPort + ".." + (replayPort + dpSize - 1) + " overlap");
        }
        return t;
    }

    /**
     * The host of every rank from {@code dp-hosts}: comma-separated {@code FIRST-LAST@HOST} or
     * {@code RANK@HOST}, ranks within {@code 0..dpSize-1}, each named at most once; unnamed ranks get
     * {@code endpointHost}.
     */
    private static List<String> rankHosts(String text, String endpointHost, int dpSize) {
        String[] hosts = new String[dpSize];
        for (String entry : text.split(",")) {
            String e = entry.trim();
            int at = e.indexOf('@');
            if (at <= 0 || at == e.length() - 1) {
                throw new IllegalArgumentException("dp-hosts entry '" + e + "' must be FIRST-LAST@HOST or RANK@HOST");
            }
            String ranks = e.substring(0, at).trim();
            int dash = ranks.indexOf('-');
            int first = number("dp-hosts rank", dash < 0 ? ranks : ranks.substring(0, dash));
            int last = dash < 0 ? first : number("dp-hosts rank", ranks.substring(dash + 1));
            if (first < 0 || last < first || last >= dpSize) {
                throw new IllegalArgumentException("dp-hosts ranks '" + ranks + "' must lie in 0.." + (dpSize - 1)
                        + " (dp-size " + dpSize + "), first <= last");
            }
            String host = hostPort("dp-hosts", "tcp://" + e.substring(at + 1).trim() + ":1")[0];
            for (int r = first; r <= last; r++) {
                if (hosts[r] != null) {
                    throw new IllegalArgumentException("dp-hosts names rank " + r + " twice");
                }
                hosts[r] = host;
            }
        }
        List<String> out = new ArrayList<>(dpSize);
        for (String h : hosts) {
            out.add(h == null ? endpointHost : h);
        }
        return out;
    }

    /** {@code [host, port]} of {@code tcp://HOST:PORT}; a wildcard or {@code {host}} becomes {@code *}. */
    private static String[] hostPort(String key, String endpoint) {
        if (!endpoint.toLowerCase(Locale.ROOT).startsWith("tcp://")) {
            throw new IllegalArgumentException(key + " '" + endpoint + "' must be tcp://HOST:PORT");
        }
        String rest = endpoint.substring("tcp://".length());
        int colon = rest.lastIndexOf(':');
        if (colon <= 0 || colon == rest.length() - 1) {
            throw new IllegalArgumentException(key + " '" + endpoint + "' must be tcp://HOST:PORT");
        }
        String host = rest.substring(0, colon);
        String port = rest.substring(colon + 1);
        int p = number(key + " port", port);
        if (p < 1 || p > 65535) {
            throw new IllegalArgumentException(key + " port must be 1..65535, got " + p);
        }
        if (host.equals("{host}") || KvEventsAdvert.isWildcard(host)) {
            host = "*";
        } else {
            String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
            try {
                new URI("tcp", null, bare.contains(":") ? "[" + bare + "]" : bare, p, null, null, null);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException(key + " host '" + host + "' is not a host name or address");
            }
            host = bare;
        }
        return new String[] {host, Integer.toString(p)};
    }

    private static int number(String key, String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " '" + text + "' is not a whole number");
        }
    }

    private static boolean rangesOverlap(int a, int b, int size) {
        return a < b + size && b < a + size;
    }

    /** The template in its own syntax (what {@link #parse} reads back). */
    @Override
    public String toString() {
        String h = host.equals("*") ? "*" : host.contains(":") ? "[" + host + "]" : host;
        return "endpoint=tcp://" + h + ":" + eventPortBase
                + (replayPortBase == null ? "" : ";replay-endpoint=tcp://" + h + ":" + replayPortBase)
                + (topic.isEmpty() ? "" : ";topic=" + topic) + ";block-size=" + blockSize + ";dp-size=" + dpSize
                + (rankHosts.isEmpty() ? "" : ";dp-hosts=" + dpHostsText())
                + (dpStartRank == 0 ? "" : ";dp-start-rank=" + dpStartRank)
                + (vllmHash == null ? "" : vllmHash.templateText());
    }

    /** {@code dp-hosts} as {@link #parse} reads it: every rank, in runs of one host. */
    private String dpHostsText() {
        StringBuilder out = new StringBuilder();
        for (int first = 0; first < dpSize; ) {
            int last = first;
            while (last + 1 < dpSize && rankHosts.get(last + 1).equals(rankHosts.get(first))) {
                last++;
            }
            String h = rankHosts.get(first);
            out.append(out.length() == 0 ? "" : ",").append(first == last ? first : first + "-" + last).append('@')
                    .append(h.contains(":") ? "[" + h + "]" : h);
            first = last + 1;
        }
        return out.toString();
    }
}
