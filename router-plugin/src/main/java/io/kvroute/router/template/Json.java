package io.kvroute.router.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code tojson} filter as transformers defines it ({@code transformers
 * src/transformers/utils/chat_template_utils.py}): Python's {@code json.dumps(x, ensure_ascii=False,
 * indent=None, separators=None, sort_keys=False)}, not jinja2's HTML-safe {@code tojson}. So {@code <},
 * {@code >}, {@code &} and {@code '} stay raw; separators default to {@code ", "} and {@code ": "}
 * ({@code ","} between items once {@code indent} is set); keys keep insertion order; floats print as
 * Python's {@code repr}; only {@code "}, {@code \}, and controls below U+0020 are escaped (raw U+2028).
 */
final class Json {

    private final boolean ensureAscii;
    private final String indent;
    private final String itemSeparator;
    private final String keySeparator;
    private final boolean sortKeys;
    private final StringBuilder out = new StringBuilder();

    private Json(boolean ensureAscii, String indent, String itemSeparator, String keySeparator, boolean sortKeys) {
        this.ensureAscii = ensureAscii;
        this.indent = indent;
        this.itemSeparator = itemSeparator;
        this.keySeparator = keySeparator;
        this.sortKeys = sortKeys;
    }

    /**
     * @param indent null, an int (spaces) or a string
     * @param separators null or a 2-item list/tuple of strings
     */
    static String dumps(Object value, boolean ensureAscii, Object indent, Object separators, boolean sortKeys)
            throws TemplateFailure {
        String indentText = null;
        if (indent instanceof Long n) {
            indentText = " ".repeat((int) Math.max(0, Math.min(n, 64)));
        } else if (indent instanceof String s) {
            indentText = s;
        } else if (indent != null) {
            throw Py.typeError("indent must be an int or a string, not " + Py.typeName(indent));
        }
        String item = indentText == null ? ", " : ",";
        String key = ": ";
        if (separators != null) {
            List<Object> parts = Py.iterate(separators);
            if (parts.size() != 2 || !(parts.get(0) instanceof String) || !(parts.get(1) instanceof String)) {
                throw Py.typeError("separators must be a pair of strings");
            }
            item = (String) parts.get(0);
            key = (String) parts.get(1);
        }
        Json json = new Json(ensureAscii, indentText, item, key, sortKeys);
        json.write(value, 0);
        return json.out.toString();
    }

    private void write(Object v, int level) throws TemplateFailure {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Long l) {
            out.append(l.longValue());
        } else if (v instanceof Double d) {
            out.append(floatText(d));
        } else if (v instanceof String s) {
            string(s);
        } else if (v instanceof List<?> || v instanceof Py.Tuple) {
            List<Object> items = Py.iterate(v);
            if (items.isEmpty()) {
                out.append("[]");
                return;
            }
            out.append('[');
            for (int i = 0; i < items.size(); i++) {
                out.append(i == 0 ? "" : itemSeparator);
                newline(level + 1);
                write(items.get(i), level + 1);
            }
            newline(level);
            out.append(']');
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                out.append("{}");
                return;
            }
            List<Map.Entry<String, Object>> entries = new ArrayList<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                entries.add(Map.entry(key(e.getKey()), e.getValue() == null ? NULL : e.getValue()));
            }
            if (sortKeys) {
                entries.sort((a, b) -> Py.compareCodePoints(a.getKey(), b.getKey()));
            }
            out.append('{');
            for (int i = 0; i < entries.size(); i++) {
                out.append(i == 0 ? "" : itemSeparator);
                newline(level + 1);
                string(entries.get(i).getKey());
                out.append(keySeparator);
                Object value = entries.get(i).getValue();
                write(value == NULL ? null : value, level + 1);
            }
            newline(level);
            out.append('}');
        } else {
            throw Py.typeError("Object of type " + Py.typeName(v) + " is not JSON serializable");
        }
    }

    /** Map.entry refuses null values; this stands for None while sorting. */
    private static final Object NULL = new Object();

    private static String key(Object k) throws TemplateFailure {
        if (k instanceof String s) {
            return s;
        }
        if (k == null) {
            return "null";
        }
        if (k instanceof Boolean b) {
            return b ? "true" : "false";
        }
        if (k instanceof Long l) {
            return l.toString();
        }
        if (k instanceof Double d) {
            return floatText(d);
        }
        throw Py.typeError("keys must be str, int, float, bool or None, not " + Py.typeName(k));
    }

    private static String floatText(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        return Py.floatRepr(d);
    }

    private void newline(int level) {
        if (indent != null) {
            out.append('\n');
            for (int i = 0; i < level; i++) {
                out.append(indent);
            }
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (ensureAscii && c > 0x7e)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
