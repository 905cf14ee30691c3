package io.kvroute.router.template;

import io.kvroute.router.template.Evaluator.LoopInfo;
import io.kvroute.router.template.Py.Method;
import io.kvroute.router.template.Py.Namespace;
import io.kvroute.router.template.Py.Tuple;
import io.kvroute.router.template.Py.Undefined;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * {@code obj.name}, {@code obj[key]} and {@code obj[a:b:c]} as jinja2's {@code Environment.getattr} and
 * {@code getitem} do: dot lookup tries the Python attribute first (so {@code d.items} is the method,
 * not the key) and the item second; subscript tries the item first. Anything missing is Undefined;
 * only an attribute or item of Undefined itself raises (jinja2 {@code UndefinedError}).
 */
final class Access {

    private Access() {}

    static Object attr(Object obj, String name) throws TemplateFailure {
        if (obj instanceof Undefined u) {
            throw undefined(u, name);
        }
        if (obj instanceof Map<?, ?> m) {
            if (Methods.isDictMethod(name)) {
                return new Method(m, name);
            }
            return m.containsKey(name) ? m.get(name) : new Undefined(name);
        }
        if (obj instanceof Namespace ns) {
            return ns.attrs.containsKey(name) ? ns.attrs.get(name) : new Undefined(name);
        }
        if (obj instanceof LoopInfo loop) {
            return Evaluator.loopAttr(loop, name);
        }
        if (obj instanceof String && Methods.isStrMethod(name)) {
            return new Method(obj, name);
        }
        if ((obj instanceof List || obj instanceof Tuple) && Methods.isListMethod(name)) {
            return new Method(obj, name);
        }
        return new Undefined(name);
    }

    static Object item(Object obj, Object key) throws TemplateFailure {
        if (obj instanceof Undefined u) {
            throw undefined(u, Py.str(key));
        }
        if (obj instanceof Map<?, ?> m) {
            if (m.containsKey(key)) {
                return m.get(key);
            }
            return key instanceof String s ? attr(obj, s) : new Undefined(String.valueOf(key));
        }
        if (Py.isInt(key)) {
            long i = Py.asLong(key);
            if (obj instanceof List<?> || obj instanceof Tuple) {
                List<Object> items = Py.iterate(obj);
                long at = i < 0 ? i + items.size() : i;
                return at >= 0 && at < items.size() ? items.get((int) at) : new Undefined("[" + i + "]");
            }
            if (obj instanceof String s) {
                int n = s.codePointCount(0, s.length());
                long at = i < 0 ? i + n : i;
                if (at < 0 || at >= n) {
                    return new Undefined("[" + i + "]");
                }
                int start = s.offsetByCodePoints(0, (int) at);
                return s.substring(start, s.offsetByCodePoints(start, 1));
            }
        }
        if (key instanceof String s && (obj instanceof Namespace || obj instanceof LoopInfo || obj instanceof String
                || obj instanceof List || obj instanceof Tuple)) {
            return attr(obj, s);
        }
        return new Undefined(String.valueOf(key));
    }

    /** Python slice semantics: clamped bounds, negative indices, any non-zero step (incl. {@code [::-1]}). */
    static Object slice(Object obj, Object start, Object stop, Object step) throws TemplateFailure {
        if (obj instanceof Undefined u) {
            throw undefined(u, "[:]");
        }
        for (Object part : new Object[] {start, stop, step}) {
            if (part != null && !Py.isInt(part)) {
                throw Py.typeError("slice indices must be integers or None");
            }
        }
        long st = step == null ? 1 : Py.asLong(step);
        if (st == 0) {
            throw Py.typeError("slice step cannot be zero");
        }
        List<Object> items;
        boolean isString = obj instanceof String;
        if (isString) {
            String s = (String) obj;
            items = new ArrayList<>();
            s.codePoints().forEach(cp -> items.add(cp));
        } else if (obj instanceof List || obj instanceof Tuple) {
            items = Py.iterate(obj);
        } else {
            return new Undefined("[:]");
        }
        int n = items.size();
        long lo;
        long hi;
        if (st > 0) {
            lo = start == null ? 0 : clamp(Py.asLong(start), n, 0, n);
            hi = stop == null ? n : clamp(Py.asLong(stop), n, 0, n);
        } else {
            lo = start == null ? n - 1 : clamp(Py.asLong(start), n, -1, n - 1);
            hi = stop == null ? -1 : clamp(Py.asLong(stop), n, -1, n - 1);
        }
        List<Object> picked = new ArrayList<>();
        for (long i = lo; st > 0 ? i < hi : i > hi; i += st) {
            picked.add(items.get((int) i));
        }
        if (isString) {
            StringBuilder sb = new StringBuilder(picked.size());
            for (Object cp : picked) {
                sb.appendCodePoint((Integer) cp);
            }
            return sb.toString();
        }
        List<Object> result = Collections.unmodifiableList(picked);
        return obj instanceof Tuple ? new Tuple(result) : result;
    }

    private static long clamp(long index, int n, long min, long max) {
        long i = index < 0 ? index + n : index;
        return Math.max(min, Math.min(max, i));
    }

    private static TemplateFailure undefined(Undefined u, String name) {
        return new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (accessing '" + name + "')");
    }
}
