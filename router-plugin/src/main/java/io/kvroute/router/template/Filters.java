package io.kvroute.router.template;

import io.kvroute.router.template.Evaluator.Macro;
import io.kvroute.router.template.Py.Method;
import io.kvroute.router.template.Py.Tuple;
import io.kvroute.router.template.Py.Undefined;
import io.kvroute.router.template.Py.View;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * jinja2's built-in filters and tests ({@code jinja2/filters.py}, {@code jinja2/tests.py}) that chat
 * templates use, plus transformers' {@code tojson}. Filters that return a Python iterator in jinja2
 * ({@code selectattr}, {@code map}, {@code reverse} on a list, ...) return a {@link View}, so iterating
 * works and printing one (which Python shows as {@code <generator object ...>}) declines.
 */
final class Filters {

    private Filters() {}

    private static Object arg(List<Object> args, Map<String, Object> kwargs, int i, String name, Object dflt) {
        if (i < args.size()) {
            return args.get(i);
        }
        return kwargs.containsKey(name) ? kwargs.get(name) : dflt;
    }

    static Object filter(String name, Object v, List<Object> args, Map<String, Object> kwargs, Evaluator ev)
            throws TemplateFailure {
        switch (name) {
            case "trim": {
                Object chars = arg(args, kwargs, 0, "chars", null);
                return Py.strip(Py.str(v), chars == null ? null : Py.str(chars));
            }
            case "length":
            case "count":
                return Py.len(v);
            case "tojson": {
                Object ascii = arg(args, kwargs, 0, "ensure_ascii", false);
                Object sortKeys = arg(args, kwargs, 3, "sort_keys", false);
                return Json.dumps(v, Py.truthy(ascii), arg(args, kwargs, 1, "indent", null),
                        arg(args, kwargs, 2, "separators", null), Py.truthy(sortKeys));
            }
            case "join": {
                String sep = Py.str(arg(args, kwargs, 0, "d", ""));
                Object attribute = arg(args, kwargs, 1, "attribute", null);
                StringBuilder sb = new StringBuilder();
                List<Object> items = Py.iterate(v);
                for (int i = 0; i < items.size(); i++) {
                    Object item = attribute == null ? items.get(i) : attrPath(items.get(i), attribute);
                    sb.append(i == 0 ? "" : sep).append(Py.str(item));
                }
                return sb.toString();
            }
            case "default":
            case "d": {
                boolean bool = Py.truthy(arg(args, kwargs, 1, "boolean", false));
                if (v instanceof Undefined || (bool && !Py.truthy(v))) {
                    return arg(args, kwargs, 0, "default_value", "");
                }
                return v;
            }
            case "lower":
                return Py.str(v).toLowerCase(Locale.ROOT);
            case "upper":
                return Py.str(v).toUpperCase(Locale.ROOT);
            case "capitalize":
                return Methods.capitalize(Py.str(v));
            case "title":
                return jinjaTitle(Py.str(v));
            case "replace": {
                Object count = arg(args, kwargs, 2, "count", null);
                return Methods.replace(Py.str(v), Py.str(arg(args, kwargs, 0, "old", "")),
                        Py.str(arg(args, kwargs, 1, "new", "")), count == null ? -1 : Py.asLong(count));
            }
            case "first": {
                List<Object> items = Py.iterate(v);
                return items.isEmpty() ? new Undefined("first") : items.get(0);
            }
            case "last": {
                List<Object> items = Py.iterate(v);
                return items.isEmpty() ? new Undefined("last") : items.get(items.size() - 1);
            }
            case "reverse": {
                if (v instanceof String s) {
                    return Access.slice(s, null, null, -1L);
                }
                List<Object> items = new ArrayList<>(Py.iterate(v));
                Collections.reverse(items);
                return new View("list_reverseiterator", Collections.unmodifiableList(items));
            }
            case "list":
                return Collections.unmodifiableList(new ArrayList<>(Py.iterate(v)));
            case "string":
            case "safe":
                return Py.str(v);
            case "escape":
            case "e":
                return Py.str(v).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                        .replace("\"", "&#34;").replace("'", "&#39;");
            case "int":
                return toInt(v, arg(args, kwargs, 0, "default", 0L));
            case "float":
                return toFloat(v, arg(args, kwargs, 0, "default", 0.0));
            case "abs":
                if (Py.isInt(v)) {
                    return Math.abs(Py.asLong(v));
                }
                if (v instanceof Double d) {
                    return Math.abs(d);
                }
                throw Py.typeError("bad operand type for abs(): '" + Py.typeName(v) + "'");
            case "items": {
                if (v instanceof Undefined) {
                    return new View(Py.GENERATOR, List.of());
                }
                if (!(v instanceof Map<?, ?>)) {
                    throw Py.typeError("Can only get item pairs from a mapping.");
                }
                return Methods.call(v, "items", List.of(), Map.of());
            }
            case "dictsort":
                return dictsort(v, args, kwargs);
            case "selectattr":
            case "rejectattr":
            case "select":
            case "reject":
                return select(name, v, args);
            case "map":
                return map(v, args, kwargs, ev);
            case "unique": {
                List<Object> out = new ArrayList<>();
                List<Object> seen = new ArrayList<>();
                for (Object item : Py.iterate(v)) {
                    Object key = item instanceof String s ? s.toLowerCase(Locale.ROOT) : item;
                    boolean dup = false;
                    for (Object k : seen) {
                        dup |= Py.eq(k, key);
                    }
                    if (!dup) {
                        seen.add(key);
                        out.add(item);
                    }
                }
                return new View(Py.GENERATOR, Collections.unmodifiableList(out));
            }
            case "sum": {
                Object attribute = arg(args, kwargs, 0, "attribute", null);
                Object total = arg(args, kwargs, 1, "start", 0L);
                for (Object item : Py.iterate(v)) {
                    total = Operators.arithmetic("+", total, attribute == null ? item : attrPath(item, attribute),
                            Integer.MAX_VALUE);
                }
                return total;
            }
            case "round": {
                long precision = Py.asLong(arg(args, kwargs, 0, "precision", 0L));
                String method = Py.str(arg(args, kwargs, 1, "method", "common"));
                if (Py.isInt(v) && precision >= 0 && method.equals("common")) {
                    return Py.asLong(v); // Python round(int, n) keeps the int
                }
                if (!Py.isNumber(v) || !method.equals("common")) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "round of " + Py.typeName(v) + " by " + method);
                }
                return new BigDecimal(Py.asDouble(v)).setScale((int) precision, RoundingMode.HALF_EVEN).doubleValue();
            }
            case "indent":
                return indent(Py.str(v), arg(args, kwargs, 0, "width", 4L),
                        Py.truthy(arg(args, kwargs, 1, "first", false)), Py.truthy(arg(args, kwargs, 2, "blank", false)));
            case "min":
            case "max": {
                List<Object> items = Py.iterate(v);
                if (items.isEmpty()) {
                    return new Undefined(name);
                }
                Object best = items.get(0);
                for (Object item : items) {
                    int c = Py.compare(foldCase(item), foldCase(best), "<");
                    if (name.equals("min") ? c < 0 : c > 0) {
                        best = item;
                    }
                }
                return best;
            }
            case "attr":
                return Access.attr(v, Py.str(arg(args, kwargs, 0, "name", "")));
            default:
                throw new IllegalStateException("filter " + name);
        }
    }

    private static Object foldCase(Object v) {
        return v instanceof String s ? s.toLowerCase(Locale.ROOT) : v;
    }

    /** jinja2 {@code make_attrgetter}: a dotted path of attributes or integer indices. */
    static Object attrPath(Object item, Object attribute) throws TemplateFailure {
        if (Py.isInt(attribute)) {
            return Access.item(item, attribute);
        }
        Object cur = item;
        for (String part : Py.str(attribute).split("\\.", -1)) {
            cur = part.chars().allMatch(Character::isDigit) && !part.isEmpty()
                    ? Access.item(cur, Long.parseLong(part)) : Access.item(cur, part);
        }
        return cur;
    }

    private static Object select(String name, Object v, List<Object> args) throws TemplateFailure {
        boolean byAttr = name.endsWith("attr");
        boolean keep = name.startsWith("select");
        int at = 0;
        Object attribute = null;
        if (byAttr) {
            if (args.isEmpty()) {
                throw Py.typeError(name + " needs an attribute");
            }
            attribute = args.get(at++);
        }
        String test = at < args.size() ? Py.str(args.get(at++)) : null;
        if (test != null && !Builtins.TESTS.contains(test)) {
            throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "unsupported test '" + test + "'");
        }
        List<Object> testArgs = args.subList(at, args.size());
        List<Object> out = new ArrayList<>();
        for (Object item : Py.iterate(v)) {
            Object subject = byAttr ? attrPath(item, attribute) : item;
            boolean pass = test == null ? Py.truthy(subject) : test(test, subject, testArgs);
            if (pass == keep) {
                out.add(item);
            }
        }
        return new View(Py.GENERATOR, Collections.unmodifiableList(out));
    }

    private static Object map(Object v, List<Object> args, Map<String, Object> kwargs, Evaluator ev)
            throws TemplateFailure {
        List<Object> out = new ArrayList<>();
        if (kwargs.containsKey("attribute")) {
            Object dflt = kwargs.get("default");
            for (Object item : Py.iterate(v)) {
                Object r = attrPath(item, kwargs.get("attribute"));
                out.add(r instanceof Undefined && kwargs.containsKey("default") ? dflt : r);
            }
        } else {
            if (args.isEmpty()) {
                throw Py.typeError("map requires a filter argument");
            }
            String filter = Py.str(args.get(0));
            if (!Builtins.FILTERS.contains(filter)) {
                throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "unsupported filter '" + filter + "'");
            }
            for (Object item : Py.iterate(v)) {
                out.add(filter(filter, item, args.subList(1, args.size()), kwargs, ev));
            }
        }
        return new View(Py.GENERATOR, Collections.unmodifiableList(out));
    }

    private static Object dictsort(Object v, List<Object> args, Map<String, Object> kwargs) throws TemplateFailure {
        if (!(v instanceof Map<?, ?>)) {
            throw Py.typeError("dictsort needs a mapping");
        }
        boolean caseSensitive = Py.truthy(arg(args, kwargs, 0, "case_sensitive", false));
        String by = Py.str(arg(args, kwargs, 1, "by", "key"));
        boolean reverse = Py.truthy(arg(args, kwargs, 2, "reverse", false));
        int pos = by.equals("value") ? 1 : 0;
        List<Object> items = new ArrayList<>(((View) Methods.call(v, "items", List.of(), Map.of())).items());
        List<TemplateFailure> failures = new ArrayList<>();
        Comparator<Object> cmp = (a, b) -> {
            try {
                Object x = ((Tuple) a).items().get(pos);
                Object y = ((Tuple) b).items().get(pos);
                return Py.compare(caseSensitive ? x : foldCase(x), caseSensitive ? y : foldCase(y), "<");
            } catch (TemplateFailure e) {
                failures.add(e);
                return 0;
            }
        };
        items.sort(reverse ? cmp.reversed() : cmp);
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        return Collections.unmodifiableList(items);
    }

    private static Object toInt(Object v, Object dflt) {
        if (Py.isInt(v)) {
            return Py.asLong(v);
        }
        if (v instanceof Double d) {
            return Double.isFinite(d) ? (long) (double) d : dflt;
        }
        if (v instanceof String s) {
            String t = Py.strip(s, null).replace("_", "");
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                try {
                    return (long) Double.parseDouble(t);
                } catch (NumberFormatException e2) {
                    return dflt;
                }
            }
        }
        return dflt;
    }

    private static Object toFloat(Object v, Object dflt) {
        if (Py.isNumber(v)) {
            return Py.asDouble(v);
        }
        if (v instanceof String s) {
            try {
                return Double.parseDouble(Py.strip(s, null));
            } catch (NumberFormatException e) {
                return dflt;
            }
        }
        return dflt;
    }

    /** jinja2 {@code do_title}: words split at whitespace and {@code -([{<}; first letter upper, rest lower. */
    private static String jinjaTitle(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean start = true;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            boolean sep = Py.isSpace(cp) || "-({[<".indexOf(cp) >= 0;
            if (sep) {
                sb.appendCodePoint(cp);
                start = true;
            } else {
                sb.append(start ? Character.toString(cp).toUpperCase(Locale.ROOT)
                        : Character.toString(cp).toLowerCase(Locale.ROOT));
                start = false;
            }
        }
        return sb.toString();
    }

    /** Python {@code str.splitlines()} boundaries. */
    private static List<String> splitlines(String s) {
        List<String> out = new ArrayList<>();
        int start = 0;
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            boolean br = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e) || c == 0x85
                    || c == 0x2028 || c == 0x2029;
            if (!br) {
                i++;
                continue;
            }
            out.add(s.substring(start, i));
            i += c == '\r' && i + 1 < s.length() && s.charAt(i + 1) == '\n' ? 2 : 1;
            start = i;
        }
        if (start < s.length()) {
            out.add(s.substring(start));
        }
        return out;
    }

    private static String indent(String s, Object width, boolean first, boolean blank) throws TemplateFailure {
        String pad = width instanceof String w ? w : " ".repeat((int) Math.max(0, Math.min(Py.asLong(width), 256)));
        List<String> lines = splitlines(s + "\n");
        StringBuilder sb = new StringBuilder();
        if (blank) {
            for (int i = 0; i < lines.size(); i++) {
                sb.append(i == 0 ? "" : "\n" + pad).append(lines.get(i));
            }
        } else {
            sb.append(lines.isEmpty() ? "" : lines.get(0));
            for (int i = 1; i < lines.size(); i++) {
                sb.append('\n').append(lines.get(i).isEmpty() ? "" : pad).append(lines.get(i));
            }
        }
        return first ? pad + sb : sb.toString();
    }

    // ---- tests ------------------------------------------------------------------------------------

    static boolean test(String name, Object v, List<Object> args) throws TemplateFailure {
        switch (name) {
            case "defined":
                return !(v instanceof Undefined);
            case "undefined":
                return v instanceof Undefined;
            case "none":
                return v == null;
            case "string":
                return v instanceof String;
            case "number":
                return Py.isNumber(v);
            case "integer":
                return v instanceof Long;
            case "float":
                return v instanceof Double;
            case "boolean":
                return v instanceof Boolean;
            case "true":
                return Boolean.TRUE.equals(v);
            case "false":
                return Boolean.FALSE.equals(v);
            case "mapping":
                return v instanceof Map;
            case "iterable":
                return v instanceof String || v instanceof List || v instanceof Tuple || v instanceof Map
                        || v instanceof View || v instanceof Undefined;
            case "sequence":
                return v instanceof String || v instanceof List || v instanceof Tuple || v instanceof Map
                        || v instanceof Undefined || (v instanceof View w && w.kind().equals("range"));
            case "callable":
                // jinja2's Undefined defines __call__ (calling it raises), so callable() is true of it
                return v instanceof Macro || v instanceof Method || v instanceof Py.GlobalFunction || v instanceof Undefined;
            case "escaped":
                return false;
            case "odd":
            case "even": {
                if (!Py.isInt(v)) {
                    throw Py.typeError("odd/even of " + Py.typeName(v));
                }
                return (Math.floorMod(Py.asLong(v), 2) == 1) == name.equals("odd");
            }
            case "divisibleby": {
                Object n = need(args, name);
                return Py.eq(Operators.arithmetic("%", v, n, Integer.MAX_VALUE), 0L);
            }
            case "lower":
            case "upper": {
                String s = Py.str(v);
                boolean anyCased = false;
                for (int i = 0; i < s.length(); ) {
                    int cp = s.codePointAt(i);
                    i += Character.charCount(cp);
                    if (Character.isUpperCase(cp) || Character.isTitleCase(cp)) {
                        if (name.equals("lower")) {
                            return false;
                        }
                        anyCased = true;
                    } else if (Character.isLowerCase(cp)) {
                        if (name.equals("upper")) {
                            return false;
                        }
                        anyCased = true;
                    }
                }
                return anyCased;
            }
            case "in":
                return Operators.contains(need(args, name), v);
            case "equalto":
            case "eq":
            case "==":
                return Py.eq(v, need(args, name));
            case "ne":
            case "!=":
                return !Py.eq(v, need(args, name));
            case "gt":
            case ">":
            case "greaterthan":
                return Operators.compare(">", v, need(args, name));
            case "ge":
            case ">=":
                return Operators.compare(">=", v, need(args, name));
            case "lt":
            case "<":
            case "lessthan":
                return Operators.compare("<", v, need(args, name));
            case "le":
            case "<=":
                return Operators.compare("<=", v, need(args, name));
            case "sameas": {
                Object o = need(args, name);
                if (v == null || o == null || v instanceof Boolean || o instanceof Boolean) {
                    return v == o || (v instanceof Boolean && v.equals(o));
                }
                if (v instanceof Long a && o instanceof Long b) {
                    return a.equals(b) && a >= -5 && a <= 256; // CPython caches small ints only
                }
                return v == o;
            }
            default:
                throw new IllegalStateException("test " + name);
        }
    }

    private static Object need(List<Object> args, String test) throws TemplateFailure {
        if (args.isEmpty()) {
            throw Py.typeError("test '" + test + "' needs an argument");
        }
        return args.get(0);
    }
}
