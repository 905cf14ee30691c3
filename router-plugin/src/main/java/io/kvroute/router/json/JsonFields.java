package io.kvroute.router.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * One rule for optional request fields: a member whose value is JSON {@code null} is absent (OpenAI
 * bodies send {@code "stream_options": null} and the like). Jackson's own accessors disagree with
 * that rule in places: {@code ObjectNode.with(name)} throws on a null member, {@code has(name)} is
 * true for it, and a string concatenation of {@code path(name).asText()} turns it into "null". Code
 * that reads or rewrites a body goes through these helpers instead. Stateless, thread-safe.
 */
public final class JsonFields {

    private JsonFields() {}

    /** The member's value, or null when {@code node} is not an object, or the member is absent or JSON null. */
    public static JsonNode optional(JsonNode node, String name) {
        if (node == null || !node.isObject()) {
            return null;
        }
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? null : value;
    }

    /** True when the member is present and not JSON null. */
    public static boolean present(JsonNode node, String name) {
        return optional(node, name) != null;
    }

    /**
     * The member as an object to write into: the existing object, or a new empty one put in place of
     * an absent or null member. A member of another type is left alone and null returned, so the
     * caller decides (the router validates the fields it rewrites before it gets here).
     */
    public static ObjectNode writableObject(ObjectNode parent, String name) {
        JsonNode value = optional(parent, name);
        if (value == null) {
            return parent.putObject(name);
        }
        return value.isObject() ? (ObjectNode) value : null;
    }

    /** Removes every top-level member whose value is JSON null; returns the names removed. */
    public static List<String> dropNulls(ObjectNode body) {
        List<String> removed = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> member = it.next();
            if (member.getValue().isNull()) {
                removed.add(member.getKey());
                it.remove();
            }
        }
        return removed;
    }
}
