package io.kvroute.router.worker;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
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
 */
public record KvEventsTemplate(String host, int eventPortBase, Integer replayPortBase, String topic, int blockSize,
                               int dpSize) {

    /** Largest block size accepted (vLLM's largest supported block size is 256; room for forks). */
    public static final int MAX_BLOCK_SIZE = 65536;

    public KvEventsTemplate {
        Objects.requireNonNull(host, "host");
        topic = topic == null ? "" : topic;
        if (blockSize < 1 || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block-size must be 1.." + MAX_BLOCK_SIZE + ", got " + blockSize);
        }
        advert(host, eventPortBase, replayPortBase, topic, blockSize, dpSize); // checks the port ranges and dp size
    }

    /** The template as an advert whose wildcard host means the worker URL's host. */
    public KvEventsAdvert advert() {
        return advert(host, eventPortBase, replayPortBase, topic, blockSize, dpSize);
    }

    private static KvEventsAdvert advert(String host, int eventPortBase, Integer replayPortBase, String topic,
            int blockSize, int dpSize) {
        return new KvEventsAdvert(host, eventPortBase, topic, blockSize, dpSize, null, null, replayPortBase);
    }

    /**
     * Parses {@code key=value} parts separated by {@code ;}: {@code endpoint} (required),
     * {@code replay-endpoint}, {@code topic}, {@code block-size} (required), {@code dp-size}. Keys are
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
                    && !key.equals("block-size") && !key.equals("dp-size")) {
                throw new IllegalArgumentException("unknown key '" + key
                        + "' (endpoint, replay-endpoint, topic, block-size, dp-size)");
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
        KvEventsTemplate t = new KvEventsTemplate(hostPort[0], Integer.parseInt(hostPort[1]), replayPort,
                parts.get("topic"), number("block-size", blockSize), dpSize);
        if (replayPort != null && rangesOverlap(t.eventPortBase, replayPort, dpSize)) {
            // vLLM binds both ranges on the engine's host: rank 1's PUB would collide with rank 0's replay
            throw new IllegalArgumentException("endpoint ports " + t.eventPortBase + ".." + (t.eventPortBase + dpSize - 1)
                    + " and replay-endpoint ports " + replayPort + ".." + (replayPort + dpSize - 1) + " overlap");
        }
        return t;
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
                + (topic.isEmpty() ? "" : ";topic=" + topic) + ";block-size=" + blockSize + ";dp-size=" + dpSize;
    }
}
