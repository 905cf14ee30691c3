package io.kvroute.router.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The {@code kv_events} block of an engine's {@code /server_info}, as SGLang advertises it
 * ({@code describe_kv_events_publisher} in sgl-project/sglang {@code python/sglang/srt/server_args.py},
 * placed under {@code "kv_events"} by {@code python/sglang/srt/entrypoints/http_server.py}):
 * <pre>{"publisher": "zmq", "endpoint_host": "*", "endpoint_port_base": 5557, "topic": "kv",
 *  "block_size": 64, "dp_size": 2, "load_endpoint_port_base": 5559, "load_topic": "load"}</pre>
 * Rank {@code r} publishes KV events on {@code tcp://HOST:endpoint_port_base + r}, load reports on
 * {@code tcp://HOST:load_endpoint_port_base + r} and (newer SGLang, and kvroute's engines) answers
 * replay requests on {@code tcp://HOST:replay_endpoint_port_base + r}; HOST is {@code endpoint_host},
 * or the worker URL's host when that is a wildcard ({@code *}, {@code 0.0.0.0}, {@code ::}, {@code [::]}).
 *
 * <p>Every port is optional: a block without {@code load_endpoint_port_base} has no load range, one
 * without {@code endpoint_port_base} no event range. {@link #parse} returns null for a missing or
 * {@code null} block (the engine does not publish) and for a block it cannot use (no dp size, a port
 * range that does not fit 1..65535); it never throws. Immutable.
 *
 * @param endpointHost the advertised bind host, possibly a wildcard
 * @param eventPortBase rank 0's KV-event PUB port, or null
 * @param topic the KV-event topic ("" = subscribe to everything)
 * @param blockSize the engine's page size in tokens, or 0 when not advertised
 * @param dpSize the number of ranks (publishers) in each range
 * @param loadPortBase rank 0's load PUB port, or null
 * @param loadTopic the load topic (SGLang: {@code load})
 * @param replayPortBase rank 0's replay ROUTER port, or null
 * @param speculativeAlgorithm the top-level {@code speculative_algorithm} of {@code /server_info}, or
 *        null: an EAGLE-family engine keys its radix cache by token bigrams ({@link #bigramPages})
 * @param rankHosts per-rank hosts (index = rank, {@code dpSize} entries) when the ranks run on several
 *        hosts (vLLM {@code --headless} nodes, stated by a template's {@code dp-hosts}); empty when every
 *        rank is on {@code endpointHost}. Rank {@code r} still uses port base + r on its host.
 * @param vllmHash how a vLLM engine hashes its blocks, as its template states it ({@code hash-algo},
 *        {@code hash-seed}), or null: never advertised by {@code /server_info}
 */
public record KvEventsAdvert(String endpointHost, Integer eventPortBase, String topic, int blockSize, int dpSize,
                             Integer loadPortBase, String loadTopic, Integer replayPortBase,
                             String speculativeAlgorithm, List<String> rankHosts, VllmHashSpec vllmHash) {

    /** An advert that states no vLLM hashing. */
    public KvEventsAdvert(String endpointHost, Integer eventPortBase, String topic, int blockSize, int dpSize,
                          Integer loadPortBase, String loadTopic, Integer replayPortBase, String speculativeAlgorithm,
                          List<String> rankHosts) {
        this(endpointHost, eventPortBase, topic, blockSize, dpSize, loadPortBase, loadTopic, replayPortBase,
                speculativeAlgorithm, rankHosts, null);
    }

    /** An advert of an engine without speculative decoding. */
    public KvEventsAdvert(String endpointHost, Integer eventPortBase, String topic, int blockSize, int dpSize,
                          Integer loadPortBase, String loadTopic, Integer replayPortBase) {
        this(endpointHost, eventPortBase, topic, blockSize, dpSize, loadPortBase, loadTopic, replayPortBase, null);
    }

    /** An advert whose ranks all run on {@code endpointHost}. */
    public KvEventsAdvert(String endpointHost, Integer eventPortBase, String topic, int blockSize, int dpSize,
                          Integer loadPortBase, String loadTopic, Integer replayPortBase, String speculativeAlgorithm) {
        this(endpointHost, eventPortBase, topic, blockSize, dpSize, loadPortBase, loadTopic, replayPortBase,
                speculativeAlgorithm, List.of());
    }

    /**
     * True for an engine whose pages hold token bigrams: SGLang with an EAGLE-family
     * {@code speculative_algorithm} ({@code EAGLE}, {@code EAGLE3}; {@code NEXTN} runs as EAGLE) keys
     * its radix cache by bigrams and publishes bigram pages ({@code token_ids} of 2-tuples,
     * sgl-project/sglang {@code python/sglang/srt/mem_cache/events.py}). Neither the router's page
     * hash nor its token keying reproduces those keys, so such a worker is not routed by KV events.
     */
    public boolean bigramPages() {
        if (speculativeAlgorithm == null) {
            return false;
        }
        String a = speculativeAlgorithm.toUpperCase(Locale.ROOT);
        return a.startsWith("EAGLE") || a.equals("NEXTN");
    }

    /** Most ranks one engine may advertise; bounds the sockets a router opens per worker. */
    public static final int MAX_DP_SIZE = 1024;

    public KvEventsAdvert {
        Objects.requireNonNull(endpointHost, "endpointHost");
        topic = topic == null ? "" : topic;
        loadTopic = loadTopic == null ? "load" : loadTopic;
        if (dpSize < 1 || dpSize > MAX_DP_SIZE) {
            throw new IllegalArgumentException("dp_size must be 1.." + MAX_DP_SIZE + ", got " + dpSize);
        }
        checkRange("endpoint_port_base", eventPortBase, dpSize);
        checkRange("load_endpoint_port_base", loadPortBase, dpSize);
        checkRange("replay_endpoint_port_base", replayPortBase, dpSize);
        rankHosts = rankHosts == null ? List.of() : List.copyOf(rankHosts);
        if (!rankHosts.isEmpty() && rankHosts.size() != dpSize) {
            throw new IllegalArgumentException("rank hosts name " + rankHosts.size() + " ranks, dp_size is " + dpSize);
        }
    }

    /** The block under {@code info.kv_events}, or null when absent, null or unusable. */
    public static KvEventsAdvert parse(JsonNode info) {
        if (info == null) {
            return null;
        }
        JsonNode block = info.get("kv_events");
        if (block == null || !block.isObject()) {
            return null;
        }
        try {
            String host = block.path("endpoint_host").isTextual() ? block.get("endpoint_host").asText() : "*";
            int dpSize = block.path("dp_size").isIntegralNumber() ? block.get("dp_size").asInt() : 1;
            int blockSize = block.path("block_size").isIntegralNumber() ? block.get("block_size").asInt() : 0;
            return new KvEventsAdvert(host, port(block, "endpoint_port_base"), text(block, "topic"),
                    Math.max(0, blockSize), dpSize, port(block, "load_endpoint_port_base"), text(block, "load_topic"),
                    port(block, "replay_endpoint_port_base"), text(info, "speculative_algorithm"));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The load endpoints to connect to, one per rank; empty when no load range is advertised. */
    public List<String> loadEndpoints(String workerHost) {
        return range(loadPortBase, workerHost);
    }

    /** The KV-event endpoints to connect to, one per rank; empty when no event range is advertised. */
    public List<String> eventEndpoints(String workerHost) {
        return range(eventPortBase, workerHost);
    }

    /** The replay endpoints, one per rank; empty when none is advertised. */
    public List<String> replayEndpoints(String workerHost) {
        return range(replayPortBase, workerHost);
    }

    /** True for the bind hosts that mean "every interface of the engine's own host". */
    public static boolean isWildcard(String host) {
        return host.equals("*") || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]") || host.isEmpty();
    }

    private List<String> range(Integer base, String workerHost) {
        if (base == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(dpSize);
        for (int r = 0; r < dpSize; r++) {
            String named = rankHosts.isEmpty() ? endpointHost : rankHosts.get(r);
            String host = isWildcard(named) ? workerHost : named;
            if (host.contains(":") && !host.startsWith("[")) {
                host = "[" + host + "]";
            }
            out.add("tcp://" + host + ":" + (base + r));
        }
        return List.copyOf(out);
    }

    private static Integer port(JsonNode block, String field) {
        JsonNode n = block.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isIntegralNumber()) {
            throw new IllegalArgumentException(field + " is not an integer");
        }
        return n.asInt();
    }

    private static String text(JsonNode block, String field) {
        JsonNode n = block.get(field);
        return n == null || n.isNull() ? null : n.asText();
    }

    private static void checkRange(String field, Integer base, int dpSize) {
        if (base != null && (base < 1 || (long) base + dpSize - 1 > 65535)) {
            throw new IllegalArgumentException(field + " range " + base + "+" + dpSize + " does not fit 1..65535");
        }
    }
}
