package io.kvroute.router.template;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Python value semantics for the renderer. Values are {@code null} (None), {@link Boolean}, {@link Long}
 * (int), {@link Double} (float), {@link String}, {@link List} (list), {@link Tuple}, {@link Map} (dict,
 * insertion-ordered), {@link Undefined}, {@link Namespace}, {@link LoopInfo}, {@link Macro} and
 * {@link Method} (a bound method object). Everything here is stateless.
 *
 * <p>Strings are indexed by code point, as Python does ({@code len('😀') == 1}). Booleans are ints in
 * arithmetic and comparison ({@code True == 1}), as in Python.
 */
final class Py {

    private Py() {}

    /** jinja2's default {@code Undefined}: prints as "", is falsy and empty; any attribute of it raises. */
    record Undefined(String name) {
        @Override
        public String toString() {
            return "";
        }
    }

    /** A Python tuple (from {@code (a, b)}, {@code dict.items()}). */
    record Tuple(List<Object> items) {}

    /**
     * A lazy Python view or sequence ({@code dict_items}, {@code dict_keys}, {@code dict_values},
     * {@code range}): iterable and sized like a list, but printed differently, so printing one declines.
     */
    record View(String kind, List<Object> items) {}

    /** The kind of View that stands for a Python generator: always truthy, and {@code len()} fails. */
    static final String GENERATOR = "generator";

    /** A bound method object such as {@code d.items} before it is called. */
    record Method(Object self, String name) {}

    /**
     * A global function named without a call ({@code strftime_now is defined}, as vLLM's Llama 3.1 tool
     * template asks): jinja2 finds the environment's globals by name like any variable, so it is defined,
     * callable and truthy; printing it ({@code <function ...>}) is declined.
     */
    record GlobalFunction(String name) {}

    /** A jinja2 {@code namespace(...)}: the only mutable value a template can make. */
    static final class Namespace {
        final Map<String, Object> attrs;

        Namespace(Map<String, Object> attrs) {
            this.attrs = attrs;
        }
    }

    static TemplateFailure typeError(String message) {
        return new TemplateFailure(TemplateFailure.Kind.TYPE_ERROR, message);
    }

    static boolean truthy(Object v) {
        if (v == null || v instanceof Undefined) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof Long l) {
            return l != 0;
        }
        if (v instanceof Double d) {
            return d != 0.0;
        }
        if (v instanceof String s) {
            return !s.isEmpty();
        }
        if (v instanceof List<?> l) {
            return !l.isEmpty();
        }
        if (v instanceof Tuple t) {
            return !t.items().isEmpty();
        }
        if (v instanceof View w) {
            return w.kind().equals(GENERATOR) || !w.items().isEmpty();
        }
        if (v instanceof Map<?, ?> m) {
            return !m.isEmpty();
        }
        return true;
    }

    static String typeName(Object v) {
        if (v == null) {
            return "NoneType";
        }
        if (v instanceof Boolean) {
            return "bool";
        }
        if (v instanceof Long) {
            return "int";
        }
        if (v instanceof Double) {
            return "float";
        }
        if (v instanceof String) {
            return "str";
        }
        if (v instanceof List) {
            return "list";
        }
        if (v instanceof Tuple) {
            return "tuple";
        }
        if (v instanceof Map) {
            return "dict";
        }
        if (v instanceof Undefined) {
            return "Undefined";
        }
        if (v instanceof View w) {
            return w.kind();
        }
        if (v instanceof GlobalFunction) {
            return "function";
        }
        return v.getClass().getSimpleName();
    }

    // ---- str() and repr() -------------------------------------------------------------------------

    /** Python {@code str(v)}, as jinja2 prints a value; Undefined prints as "". */
    static String str(Object v) throws TemplateFailure {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Undefined) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        repr(v, sb);
        return sb.toString();
    }

    static void repr(Object v, StringBuilder sb) throws TemplateFailure {
        if (v == null) {
            sb.append("None");
        } else if (v instanceof Boolean b) {
            sb.append(b ? "True" : "False");
        } else if (v instanceof Long l) {
            sb.append(l.longValue());
        } else if (v instanceof Double d) {
            sb.append(floatRepr(d));
        } else if (v instanceof String s) {
            reprString(s, sb);
        } else if (v instanceof List<?> l) {
            sb.append('[');
            reprItems(l, sb);
            sb.append(']');
        } else if (v instanceof Tuple t) {
            sb.append('(');
            reprItems(t.items(), sb);
            sb.append(t.items().size() == 1 ? ",)" : ")");
        } else if (v instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                repr(e.getKey(), sb);
                sb.append(": ");
                repr(e.getValue(), sb);
            }
            sb.append('}');
        } else if (v instanceof Undefined) {
            // repr(Undefined) is "Undefined"; str() of a container holding one prints that.
            sb.append("Undefined");
        } else {
            throw new TemplateFailure(TemplateFailure.Kind.UNSUPPORTED_VALUE,
                    "cannot print a " + typeName(v) + " as Python would");
        }
    }

    private static void reprItems(List<?> items, StringBuilder sb) throws TemplateFailure {
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            repr(items.get(i), sb);
        }
    }

    /** Python {@code repr(str)}: single quotes unless the text has ' and no ", non-printables escaped. */
    static void reprString(String s, StringBuilder sb) {
        char q = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        sb.append(q);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == q || cp == '\\') {
                sb.append('\\').appendCodePoint(cp);
            } else if (cp == '\n') {
                sb.append("\\n");
            } else if (cp == '\r') {
                sb.append("\\r");
            } else if (cp == '\t') {
                sb.append("\\t");
            } else if (cp < 0x20 || cp == 0x7f) {
                sb.append(String.format("\\x%02x", cp));
            } else if (cp < 0x7f || isPrintable(cp)) {
                sb.appendCodePoint(cp);
            } else if (cp <= 0xff) {
                sb.append(String.format("\\x%02x", cp));
            } else if (cp <= 0xffff) {
                sb.append(String.format("\\u%04x", cp));
            } else {
                sb.append(String.format("\\U%08x", cp));
            }
        }
        sb.append(q);
    }

    /** Python {@code str.isprintable} for one code point: not Cc, Cf, Cs, Co, Cn, Zl, Zp, nor Zs other than space. */
    static boolean isPrintable(int cp) {
        if (cp == ' ') {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                    Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /**
     * Python {@code repr(float)}: the shortest digits that round-trip, positional for exponents in
     * [-4, 16), otherwise scientific with a signed two-digit exponent ({@code 1e-07}, {@code 1e+20}).
     * The digits come from a BigDecimal search instead of {@code Double.toString}, which before JDK 19
     * sometimes printed more digits than the shortest (JDK-4511638).
     */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(d);
        BigDecimal shortest = exact;
        for (int p = 1; p <= 17; p++) {
            BigDecimal r = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            if (r.doubleValue() == d) {
                shortest = r;
                break;
            }
        }
        String digits = shortest.unscaledValue().abs().toString().replaceAll("0+$", "");
        if (digits.isEmpty()) {
            digits = "0";
        }
        // value = 0.d1d2d3... * 10^(exp10 + 1), i.e. d1.d2d3... * 10^exp10
        int exp10 = shortest.precision() - shortest.scale() - 1;
        StringBuilder sb = new StringBuilder();
        if (d < 0) {
            sb.append('-');
        }
        if (exp10 >= -4 && exp10 < 16) {
            if (exp10 < 0) {
                sb.append("0.").append("0".repeat(-exp10 - 1)).append(digits);
            } else if (digits.length() <= exp10 + 1) {
                sb.append(digits).append("0".repeat(exp10 + 1 - digits.length())).append(".0");
            } else {
                sb.append(digits, 0, exp10 + 1).append('.').append(digits, exp10 + 1, digits.length());
            }
        } else {
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            sb.append('e').append(exp10 < 0 ? '-' : '+');
            int a = Math.abs(exp10);
            sb.append(a < 10 ? "0" : "").append(a);
        }
        return sb.toString();
    }

    // ---- equality and ordering --------------------------------------------------------------------

    static boolean isNumber(Object v) {
        return v instanceof Long || v instanceof Double || v instanceof Boolean;
    }

    static double asDouble(Object v) {
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return ((Number) v).doubleValue();
    }

    static long asLong(Object v) {
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return (Long) v;
    }

    static boolean isInt(Object v) {
        return v instanceof Long || v instanceof Boolean;
    }

    /** Python {@code ==}. */
    static boolean eq(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null) {
            return false;
        }
        if (isNumber(a) && isNumber(b)) {
            if (isInt(a) && isInt(b)) {
                return asLong(a) == asLong(b);
            }
            return asDouble(a) == asDouble(b);
        }
        if (a instanceof Undefined || b instanceof Undefined) {
            return a instanceof Undefined && b instanceof Undefined;
        }
        if (a instanceof List<?> la && b instanceof List<?> lb) {
            return eqItems(la, lb);
        }
        if (a instanceof Tuple ta && b instanceof Tuple tb) {
            return eqItems(ta.items(), tb.items());
        }
        if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
            if (ma.size() != mb.size()) {
                return false;
            }
            for (Map.Entry<?, ?> e : ma.entrySet()) {
                if (!mb.containsKey(e.getKey()) || !eq(e.getValue(), mb.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        return Objects.equals(a, b);
    }

    private static boolean eqItems(List<?> a, List<?> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!eq(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /** Python ordering for {@code < <= > >=}; strings by code point; anything else is a TypeError. */
    static int compare(Object a, Object b, String op) throws TemplateFailure {
        if (isNumber(a) && isNumber(b)) {
            if (isInt(a) && isInt(b)) {
                return Long.compare(asLong(a), asLong(b));
            }
            return Double.compare(asDouble(a), asDouble(b));
        }
        if (a instanceof String sa && b instanceof String sb) {
            return compareCodePoints(sa, sb);
        }
        if (a instanceof List<?> la && b instanceof List<?> lb) {
            for (int i = 0; i < Math.min(la.size(), lb.size()); i++) {
                if (!eq(la.get(i), lb.get(i))) {
                    return compare(la.get(i), lb.get(i), op);
                }
            }
            return Integer.compare(la.size(), lb.size());
        }
        throw typeError("'" + op + "' not supported between instances of '" + typeName(a) + "' and '"
                + typeName(b) + "'");
    }

    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    // ---- iteration and length ---------------------------------------------------------------------

    /** The items a {@code for} loop (or a filter) iterates: list/tuple items, dict keys, string code points. */
    static List<Object> iterate(Object v) throws TemplateFailure {
        if (v instanceof List<?> l) {
            @SuppressWarnings("unchecked")
            List<Object> items = (List<Object>) l;
            return items;
        }
        if (v instanceof Tuple t) {
            return t.items();
        }
        if (v instanceof View w) {
            return w.items();
        }
        if (v instanceof Map<?, ?> m) {
            return new ArrayList<>(m.keySet());
        }
        if (v instanceof String s) {
            List<Object> chars = new ArrayList<>(s.length());
            for (Iterator<Integer> it = s.codePoints().iterator(); it.hasNext(); ) {
                chars.add(Character.toString(it.next()));
            }
            return chars;
        }
        if (v instanceof Undefined) {
            return List.of();
        }
        throw typeError("'" + typeName(v) + "' object is not iterable");
    }

    static long len(Object v) throws TemplateFailure {
        if (v instanceof String s) {
            return s.codePointCount(0, s.length());
        }
        if (v instanceof List<?> l) {
            return l.size();
        }
        if (v instanceof Tuple t) {
            return t.items().size();
        }
        if (v instanceof View w && !w.kind().equals(GENERATOR)) {
            return w.items().size();
        }
        if (v instanceof Map<?, ?> m) {
            return m.size();
        }
        if (v instanceof Undefined) {
            return 0;
        }
        throw typeError("object of type '" + typeName(v) + "' has no len()");
    }

    // ---- Python string whitespace and strip -------------------------------------------------------

    /**
     * Python {@code str.isspace} for one char: the 29 code points {@code \t\n\v\f\r}, U+001C-U+001F, space,
     * U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. Java's
     * {@code trim()}/{@code strip()} use different sets (and U+FEFF is not whitespace in Python).
     */
    static boolean isSpace(int c) {
        if (c <= 0x20) {
            return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
        }
        return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028
                || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isSpace(cp) : chars.indexOf(cp) >= 0 || (cp > 0xffff && chars.contains(Character.toString(cp)));
    }

    /** Python {@code s.strip(chars)}: {@code chars} is a set of characters; null means whitespace. */
    static String strip(String s, String chars) {
        return rstrip(lstrip(s, chars), chars);
    }

    static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            if (!stripped(cp, chars)) {
                break;
            }
            i += Character.charCount(cp);
        }
        return s.substring(i);
    }

    static String rstrip(String s, String chars) {
        int j = s.length();
        while (j > 0) {
            int cp = s.codePointBefore(j);
            if (!stripped(cp, chars)) {
                break;
            }
            j -= Character.charCount(cp);
        }
        return s.substring(0, j);
    }

    /** Python {@code s.split(sep, maxsplit)}: keeps empty pieces for an explicit separator. */
    static List<Object> split(String s, String sep, long maxsplit) throws TemplateFailure {
        List<Object> out = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && isSpace(s.charAt(i))) {
                    i++;
                }
                if (i >= n) {
                    break;
                }
                if (maxsplit >= 0 && out.size() >= maxsplit) {
                    out.add(s.substring(i));
                    break;
                }
                int j = i;
                while (j < n && !isSpace(s.charAt(j))) {
                    j++;
                }
                out.add(s.substring(i, j));
                i = j;
            }
            return out;
        }
        if (sep.isEmpty()) {
            throw new TemplateFailure(TemplateFailure.Kind.TYPE_ERROR, "empty separator");
        }
        int from = 0;
        while (maxsplit < 0 || out.size() < maxsplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) {
                break;
            }
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }
}
