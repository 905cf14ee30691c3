package io.kvroute.router.pd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.LongSupplier;

/**
 * Adds the PD bootstrap rendezvous to a request body, as SGLang's PD router does: the prefill
 * worker's {@code bootstrap_host} and {@code bootstrap_port} (never null in practice: a prefill worker
 * whose port is unknown is not paired, see {@code worker/ReadyPool}) and a
 * random non-negative 63-bit {@code bootstrap_room}. A batched request gets arrays of length n, one
 * rendezvous per sequence. The same body then goes to both workers, so both sides agree.
 */
public final class BootstrapInjector {

    private BootstrapInjector() {}

    /**
     * The number of sequences a body asks for: {@code n} when above 1, the length of a
     * {@code prompt}/{@code text} array of strings, or of a batched {@code input_ids} (array of
     * arrays); 1 otherwise.
     */
    public static int batchSize(JsonNode body) {
        JsonNode n = body.get("n");
        if (n != null && n.canConvertToInt() && n.asInt() > 1) {
            return n.asInt();
        }
        for (String field : new String[] {"prompt", "text"}) {
            JsonNode value = body.get(field);
            if (value != null && value.isArray() && value.size() > 1 && value.get(0).isTextual()) {
                return value.size();
            }
        }
        JsonNode ids = body.get("input_ids");
        if (ids != null && ids.isArray() && ids.size() > 0 && ids.get(0).isArray()) {
            return ids.size();
        }
        return 1;
    }

    /** Injects the rendezvous fields; {@code rooms} supplies raw random longs (masked to 63 bits here). */
    public static void inject(ObjectNode body, String host, Integer port, LongSupplier rooms) {
        int n = batchSize(body);
        if (n == 1) {
            body.put("bootstrap_host", host);
            if (port == null) {
                body.putNull("bootstrap_port");
            } else {
                body.put("bootstrap_port", port);
            }
            body.put("bootstrap_room", rooms.getAsLong() & Long.MAX_VALUE);
            return;
        }
        ArrayNode hosts = body.putArray("bootstrap_host");
        ArrayNode ports = body.putArray("bootstrap_port");
        ArrayNode roomIds = body.putArray("bootstrap_room");
        for (int i = 0; i < n; i++) {
            hosts.add(host);
            if (port == null) {
                ports.addNull();
            } else {
                ports.add(port);
            }
            roomIds.add(rooms.getAsLong() & Long.MAX_VALUE);
        }
    }
}
