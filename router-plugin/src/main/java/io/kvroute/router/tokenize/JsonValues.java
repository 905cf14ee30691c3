package io.kvroute.router.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Jackson nodes as the plain values a chat template sees (Python's {@code json.loads} of the request):
 * objects keep their key order, integers are {@code Long} (or {@code BigInteger} beyond 64 bits, which
 * the renderer declines), other numbers {@code Double}, JSON null is {@code null}.
 */
final class JsonValues {

    private JsonValues() {}

    static Object plain(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return null;
        }
        if (n.isTextual()) {
            return n.textValue();
        }
        if (n.isBoolean()) {
            return n.booleanValue();
        }
        if (n.isIntegralNumber()) {
            return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
        }
        if (n.isNumber()) {
            return n.doubleValue();
        }
        if (n.isArray()) {
            List<Object> out = new ArrayList<>(n.size());
            n.forEach(e -> out.add(plain(e)));
            return out;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), plain(e.getValue()));
        }
        return out;
    }
}
