package io.kvroute.mock;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code kv_events} block of {@code /server_info}, shaped as SGLang's
 * {@code describe_kv_events_publisher} (sgl-project/sglang {@code python/sglang/srt/server_args.py})
 * shapes it, so SGLang's router finds this worker's publishers too: {@code endpoint_host},
 * {@code dp_size}, {@code block_size}, and per range a base port with rank r on base + r. The block
 * is null (JSON {@code null}, as SGLang sends) when the worker publishes nothing.
 */
final class KvEventsBlock {
    private KvEventsBlock() {}

    /**
     * @param loadEndpoints the bound load endpoints, one per rank on consecutive ports, or null
     * @param events the KV-event publisher, or null
     */
    static Map<String, Object> of(String host, int pageSize, List<String> loadEndpoints, KvEventReporting events) {
        boolean load = loadEndpoints != null && !loadEndpoints.isEmpty();
        if (!load && events == null) {
            return null;
        }
        Map<String, Object> block = new LinkedHashMap<>();
        block.put("publisher", "zmq");
        block.put("endpoint_host", host);
        block.put("block_size", pageSize);
        block.put("dp_size", load ? loadEndpoints.size() : 1);
        if (events != null) {
            events.describe(block);
        }
        if (load) {
            block.put("load_endpoint_port_base", port(loadEndpoints.get(0)));
            block.put("load_topic", "load");
        }
        return block;
    }

    static int port(String endpoint) {
        return URI.create(endpoint).getPort();
    }
}
