package io.kvroute.router.template;

import io.kvroute.router.template.Py.Namespace;
import io.kvroute.router.template.Py.Tuple;
import io.kvroute.router.template.Py.View;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Python methods on str, dict and list values, and the template globals transformers provides
 * ({@code raise_exception}, {@code strftime_now}) plus jinja2's ({@code namespace}, {@code range},
 * {@code dict}). Methods that mutate a list or dict raise as jinja2's {@code ImmutableSandboxedEnvironment}
 * does. Any method outside {@link Builtins#METHODS} was already refused when the template compiled.
 */
final class Methods {

    /** jinja2 sandbox {@code MAX_RANGE}: bigger ranges raise SecurityError. */
    static final int MAX_RANGE = 100_000;

    static final Set<String> STR = Set.of("startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip",
            "replace", "upper", "lower", "title", "capitalize", "find", "count", "join", "isdigit", "isspace");
    static final Set<String> DICT = Set.of("items", "keys", "values", "get", "copy");
    static final Set<String> LIST = Set.of("index", "count", "copy");
    /** Refused by the immutable sandbox. */
    static final Set<String> MUTATING = Set.of("append", "extend", "insert", "pop", "remove", "reverse", "sort",
            "clear", "update", "setdefault", "popitem", "add", "discard");

    private Methods() {}

    static boolean isDictMethod(String name) {
        return DICT.contains(name) || MUTATING.contains(name);
    }

    static boolean isStrMethod(String name) {
        return STR.contains(name);
    }

    static boolean isListMethod(String name) {
        return LIST.contains(name) || MUTATING.contains(name);
    }

    static Object call(Object self, String name, List<Object> args, Map<String, Object> kwargs)
            throws TemplateFailure {
        if (MUTATING.contains(name) && (self instanceof List || self instanceof Map)) {
            throw new TemplateFailure(Kind.SECURITY, "access to attribute '" + name + "' of '" + Py.typeName(self)
                    + "' object is unsafe");
        }
        if (self instanceof String s && STR.contains(name)) {
            return str(s, name, args, kwargs);
        }
        if (self instanceof Map<?, ?> m && DICT.contains(name)) {
            return dict(m, name, args);
        }
        if ((self instanceof List || self instanceof Tuple) && LIST.contains(name)) {
            List<Object> items = Py.iterate(self);
            switch (name) {
                case "copy":
                    return Collections.unmodifiableList(new ArrayList<>(items));
                case "count": {
                    long n = 0;
                    for (Object o : items) {
                        n += Py.eq(o, arg(args, 0)) ? 1 : 0;
                    }
                    return n;
                }
                default:
                    for (int i = 0; i < items.size(); i++) {
                        if (Py.eq(items.get(i), arg(args, 0))) {
                            return (long) i;
                        }
                    }
                    throw Py.typeError("value is not in list");
            }
        }
        // jinja2: the attribute lookup yields Undefined, and calling Undefined raises UndefinedError.
        throw new TemplateFailure(Kind.UNDEFINED, "'" + Py.typeName(self) + " object' has no attribute '" + name + "'");
    }

    private static Object arg(List<Object> args, int i) throws TemplateFailure {
        if (i >= args.size()) {
            throw Py.typeError("missing argument " + (i + 1));
        }
        return args.get(i);
    }

    private static String optString(List<Object> args, int i, String what) throws TemplateFailure {
        if (i >= args.size() || args.get(i) == null) {
            return null;
        }
        if (args.get(i) instanceof String s) {
            return s;
        }
        throw Py.typeError(what + " arg must be None or str, not " + Py.typeName(args.get(i)));
    }

    private static Object str(String s, String name, List<Object> args, Map<String, Object> kwargs)
            throws TemplateFailure {
        if (!kwargs.isEmpty() && !(name.equals("split") || name.equals("rsplit"))) {
            throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "keyword arguments to str." + name);
        }
        switch (name) {
            case "startswith":
            case "endswith": {
                if (args.size() != 1) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "str." + name + " with start/end");
                }
                List<Object> options = args.get(0) instanceof Tuple t ? t.items() : List.of(args.get(0));
                for (Object o : options) {
                    if (!(o instanceof String p)) {
                        throw Py.typeError(name + " first arg must be str or a tuple of str");
                    }
                    if (name.equals("startswith") ? s.startsWith(p) : s.endsWith(p)) {
                        return true;
                    }
                }
                return false;
            }
            case "split":
            case "rsplit": {
                Object sep = args.size() > 0 ? args.get(0) : kwargs.getOrDefault("sep", null);
                Object max = args.size() > 1 ? args.get(1) : kwargs.getOrDefault("maxsplit", -1L);
                if (sep != null && !(sep instanceof String)) {
                    throw Py.typeError("must be str or None, not " + Py.typeName(sep));
                }
                if (!Py.isInt(max)) {
                    throw Py.typeError("maxsplit must be an int");
                }
                long maxsplit = Py.asLong(max);
                if (name.equals("rsplit") && maxsplit >= 0) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "str.rsplit with maxsplit");
                }
                return Collections.unmodifiableList(Py.split(s, (String) sep, maxsplit));
            }
            case "strip":
                return Py.strip(s, optString(args, 0, "strip"));
            case "lstrip":
                return Py.lstrip(s, optString(args, 0, "lstrip"));
            case "rstrip":
                return Py.rstrip(s, optString(args, 0, "rstrip"));
            case "replace": {
                if (!(arg(args, 0) instanceof String old) || !(arg(args, 1) instanceof String rep)) {
                    throw Py.typeError("replace arguments must be str");
                }
                long count = args.size() > 2 ? Py.asLong(args.get(2)) : -1;
                return replace(s, old, rep, count);
            }
            case "upper":
                return s.toUpperCase(Locale.ROOT);
            case "lower":
                return s.toLowerCase(Locale.ROOT);
            case "title":
                return title(s);
            case "capitalize":
                return capitalize(s);
            case "find": {
                if (!(arg(args, 0) instanceof String sub) || args.size() > 1) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "str.find form");
                }
                int at = s.indexOf(sub);
                return at < 0 ? -1L : (long) s.codePointCount(0, at);
            }
            case "count": {
                if (!(arg(args, 0) instanceof String sub) || args.size() > 1) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "str.count form");
                }
                if (sub.isEmpty()) {
                    return (long) s.codePointCount(0, s.length()) + 1;
                }
                long n = 0;
                for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
                    n++;
                }
                return n;
            }
            case "join": {
                StringBuilder sb = new StringBuilder();
                List<Object> items = Py.iterate(arg(args, 0));
                for (int i = 0; i < items.size(); i++) {
                    if (!(items.get(i) instanceof String piece)) {
                        throw Py.typeError("sequence item " + i + ": expected str instance, "
                                + Py.typeName(items.get(i)) + " found");
                    }
                    sb.append(i == 0 ? "" : s).append(piece);
                }
                return sb.toString();
            }
            case "isdigit":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            case "isspace":
                return !s.isEmpty() && s.chars().allMatch(Py::isSpace);
            default:
                throw new IllegalStateException("str method " + name);
        }
    }

    static String replace(String s, String old, String rep, long count) {
        if (count < 0) {
            if (old.isEmpty()) {
                StringBuilder sb = new StringBuilder(rep);
                s.codePoints().forEach(cp -> sb.appendCodePoint(cp).append(rep));
                return sb.toString();
            }
            return s.replace(old, rep);
        }
        StringBuilder sb = new StringBuilder();
        int from = 0;
        for (long n = 0; n < count; n++) {
            int at = old.isEmpty() ? (from <= s.length() ? from : -1) : s.indexOf(old, from);
            if (at < 0) {
                break;
            }
            sb.append(s, from, at).append(rep);
            if (old.isEmpty()) {
                if (at >= s.length()) {
                    from = at + 1;
                    break;
                }
                int next = s.offsetByCodePoints(at, 1);
                sb.append(s, at, next);
                from = next;
            } else {
                from = at + old.length();
            }
        }
        if (from <= s.length()) {
            sb.append(s, Math.min(from, s.length()), s.length());
        }
        return sb.toString();
    }

    private static boolean cased(int cp) {
        return Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
    }

    /** Python {@code str.title}: a cased character after an uncased one is title-cased, the rest lower-cased. */
    static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean prevCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            sb.appendCodePoint(prevCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            prevCased = cased(cp);
        }
        return sb.toString();
    }

    /** Python {@code str.capitalize}: first character title-cased, the rest lower-cased. */
    static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        int first = s.codePointAt(0);
        return new StringBuilder().appendCodePoint(Character.toTitleCase(first))
                .append(s.substring(Character.charCount(first)).toLowerCase(Locale.ROOT)).toString();
    }

    private static Object dict(Map<?, ?> m, String name, List<Object> args) throws TemplateFailure {
        switch (name) {
            case "items": {
                List<Object> items = new ArrayList<>(m.size());
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    List<Object> pair = new ArrayList<>(2);
                    pair.add(e.getKey());
                    pair.add(e.getValue());
                    items.add(new Tuple(Collections.unmodifiableList(pair)));
                }
                return new View("dict_items", Collections.unmodifiableList(items));
            }
            case "keys":
                return new View("dict_keys", Collections.unmodifiableList(new ArrayList<>(m.keySet())));
            case "values":
                return new View("dict_values", Collections.unmodifiableList(new ArrayList<>(m.values())));
            case "copy":
                return Collections.unmodifiableMap(new LinkedHashMap<>(m));
            default: {
                Object key = arg(args, 0);
                Object fallback = args.size() > 1 ? args.get(1) : null;
                return m.containsKey(key) ? m.get(key) : fallback;
            }
        }
    }

    // ---- globals ----------------------------------------------------------------------------------

    static Object global(String name, List<Object> args, Map<String, Object> kwargs, Evaluator ev)
            throws TemplateFailure {
        switch (name) {
            case "raise_exception":
                throw new TemplateFailure(Kind.RAISE_EXCEPTION, args.isEmpty() ? "" : Py.str(args.get(0)));
            case "namespace":
            case "dict": {
                Map<String, Object> attrs = new LinkedHashMap<>();
                if (!args.isEmpty()) {
                    if (args.size() > 1 || !(args.get(0) instanceof Map<?, ?> init)) {
                        throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, name + "() with positional arguments");
                    }
                    for (Map.Entry<?, ?> e : init.entrySet()) {
                        attrs.put(String.valueOf(e.getKey()), e.getValue());
                    }
                }
                attrs.putAll(kwargs);
                return name.equals("dict") ? Collections.unmodifiableMap(attrs) : new Namespace(attrs);
            }
            case "range": {
                for (Object a : args) {
                    if (!Py.isInt(a)) {
                        throw Py.typeError("range() arguments must be integers");
                    }
                }
                long start = args.size() > 1 ? Py.asLong(args.get(0)) : 0;
                long stop = args.size() == 1 ? Py.asLong(args.get(0)) : args.size() > 1 ? Py.asLong(args.get(1)) : 0;
                long step = args.size() > 2 ? Py.asLong(args.get(2)) : 1;
                if (args.isEmpty() || args.size() > 3 || step == 0) {
                    throw Py.typeError("bad range() arguments");
                }
                List<Object> items = new ArrayList<>();
                for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
                    if (items.size() >= MAX_RANGE) {
                        throw new TemplateFailure(Kind.SECURITY, "range too big, the sandbox blocks ranges larger than "
                                + MAX_RANGE);
                    }
                    items.add(i);
                }
                return new View("range", Collections.unmodifiableList(items));
            }
            case "strftime_now":
                if (args.size() != 1 || !(args.get(0) instanceof String fmt)) {
                    throw Py.typeError("strftime_now takes one format string");
                }
                return strftime(fmt, ZonedDateTime.ofInstant(ev.now(), ZoneOffset.UTC));
            default:
                throw new IllegalStateException("global " + name);
        }
    }

    /** The C strftime directives chat templates use; any other directive declines. */
    static String strftime(String fmt, ZonedDateTime t) throws TemplateFailure {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < fmt.length(); i++) {
            char c = fmt.charAt(i);
            if (c != '%' || i + 1 >= fmt.length()) {
                sb.append(c);
                continue;
            }
            char d = fmt.charAt(++i);
            boolean noPad = false;
            if (d == '-' && i + 1 < fmt.length()) {
                noPad = true;
                d = fmt.charAt(++i);
            }
            switch (d) {
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> pad(sb, t.getYear() % 100, noPad);
                case 'm' -> pad(sb, t.getMonthValue(), noPad);
                case 'd' -> pad(sb, t.getDayOfMonth(), noPad);
                case 'H' -> pad(sb, t.getHour(), noPad);
                case 'I' -> pad(sb, (t.getHour() + 11) % 12 + 1, noPad);
                case 'M' -> pad(sb, t.getMinute(), noPad);
                case 'S' -> pad(sb, t.getSecond(), noPad);
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'j' -> sb.append(String.format("%03d", t.getDayOfYear()));
                case '%' -> sb.append('%');
                default -> throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "strftime directive %" + d);
            }
        }
        return sb.toString();
    }

    private static void pad(StringBuilder sb, int v, boolean noPad) {
        if (!noPad && v < 10) {
            sb.append('0');
        }
        sb.append(v);
    }
}
