package io.kvroute.router.template;

import io.kvroute.router.template.Py.Tuple;
import io.kvroute.router.template.Py.Undefined;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Python's binary operators on renderer values: {@code +} refuses str + non-str (jinja2 does not
 * coerce; only {@code ~} does), {@code /} is true division, {@code //} and {@code %} floor toward
 * negative infinity, any arithmetic on Undefined raises, and int overflow declines rather than wrap.
 */
final class Operators {

    private Operators() {}

    static Object arithmetic(String op, Object a, Object b, int maxChars) throws TemplateFailure {
        if (a instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (operator " + op + ")");
        }
        if (b instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (operator " + op + ")");
        }
        if (Py.isNumber(a) && Py.isNumber(b)) {
            return numeric(op, a, b);
        }
        switch (op) {
            case "+":
                if (a instanceof String sa && b instanceof String sb) {
                    if ((long) sa.length() + sb.length() > maxChars) {
                        throw new TemplateFailure(Kind.LIMIT, "string exceeds " + maxChars + " characters");
                    }
                    return sa.concat(sb);
                }
                if (a instanceof List<?> la && b instanceof List<?> lb) {
                    List<Object> out = new ArrayList<>(la);
                    out.addAll(lb);
                    return Collections.unmodifiableList(out);
                }
                if (a instanceof Tuple ta && b instanceof Tuple tb) {
                    List<Object> out = new ArrayList<>(ta.items());
                    out.addAll(tb.items());
                    return new Tuple(Collections.unmodifiableList(out));
                }
                break;
            case "*":
                if (a instanceof String s && Py.isInt(b)) {
                    return repeat(s, Py.asLong(b), maxChars);
                }
                if (b instanceof String s && Py.isInt(a)) {
                    return repeat(s, Py.asLong(a), maxChars);
                }
                break;
            case "%":
                if (a instanceof String) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "printf-style string formatting");
                }
                break;
            default:
                break;
        }
        throw Py.typeError("unsupported operand type(s) for " + op + ": '" + Py.typeName(a) + "' and '"
                + Py.typeName(b) + "'");
    }

    private static String repeat(String s, long times, int maxChars) throws TemplateFailure {
        if (times <= 0) {
            return "";
        }
        if (s.length() * times > maxChars) {
            throw new TemplateFailure(Kind.LIMIT, "string exceeds " + maxChars + " characters");
        }
        return s.repeat((int) times);
    }

    private static Object numeric(String op, Object a, Object b) throws TemplateFailure {
        boolean ints = Py.isInt(a) && Py.isInt(b);
        if (ints) {
            long x = Py.asLong(a);
            long y = Py.asLong(b);
            try {
                switch (op) {
                    case "+":
                        return Math.addExact(x, y);
                    case "-":
                        return Math.subtractExact(x, y);
                    case "*":
                        return Math.multiplyExact(x, y);
                    case "/":
                        if (y == 0) {
                            throw Py.typeError("division by zero");
                        }
                        return (double) x / (double) y;
                    case "//":
                        if (y == 0) {
                            throw Py.typeError("integer division or modulo by zero");
                        }
                        return Math.floorDiv(x, y);
                    case "%":
                        if (y == 0) {
                            throw Py.typeError("integer division or modulo by zero");
                        }
                        return Math.floorMod(x, y);
                    case "**":
                        if (y < 0) {
                            return Math.pow(x, y);
                        }
                        long r = 1;
                        for (long i = 0; i < y; i++) {
                            r = Math.multiplyExact(r, x);
                        }
                        return r;
                    default:
                        break;
                }
            } catch (ArithmeticException e) {
                throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "integer beyond 64 bits");
            }
        }
        double x = Py.asDouble(a);
        double y = Py.asDouble(b);
        switch (op) {
            case "+":
                return x + y;
            case "-":
                return x - y;
            case "*":
                return x * y;
            case "/":
                if (y == 0) {
                    throw Py.typeError("float division by zero");
                }
                return x / y;
            case "//":
                if (y == 0) {
                    throw Py.typeError("float floor division by zero");
                }
                return Math.floor(x / y);
            case "%":
                if (y == 0) {
                    throw Py.typeError("float modulo");
                }
                double m = x % y;
                return (m != 0 && (m < 0) != (y < 0)) ? m + y : m;
            case "**":
                return Math.pow(x, y);
            default:
                throw new IllegalStateException("operator " + op);
        }
    }

    static Object negate(Object v) throws TemplateFailure {
        if (v instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (unary -)");
        }
        if (Py.isInt(v)) {
            long x = Py.asLong(v);
            if (x == Long.MIN_VALUE) {
                throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "integer beyond 64 bits");
            }
            return -x;
        }
        if (v instanceof Double d) {
            return -d;
        }
        throw Py.typeError("bad operand type for unary -: '" + Py.typeName(v) + "'");
    }

    static Object plus(Object v) throws TemplateFailure {
        if (v instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (unary +)");
        }
        if (Py.isInt(v)) {
            return Py.asLong(v);
        }
        if (v instanceof Double) {
            return v;
        }
        throw Py.typeError("bad operand type for unary +: '" + Py.typeName(v) + "'");
    }

    static boolean compare(String op, Object a, Object b) throws TemplateFailure {
        switch (op) {
            case "==":
                return Py.eq(a, b);
            case "!=":
                return !Py.eq(a, b);
            case "in":
                return contains(b, a);
            case "not in":
                return !contains(b, a);
            default:
                break;
        }
        if (a instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (operator " + op + ")");
        }
        if (b instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined (operator " + op + ")");
        }
        int c = Py.compare(a, b, op);
        return switch (op) {
            case "<" -> c < 0;
            case "<=" -> c <= 0;
            case ">" -> c > 0;
            case ">=" -> c >= 0;
            default -> throw new IllegalStateException("operator " + op);
        };
    }

    /** Python {@code needle in container}. */
    static boolean contains(Object container, Object needle) throws TemplateFailure {
        if (container instanceof String s) {
            if (!(needle instanceof String n)) {
                throw Py.typeError("'in <string>' requires string as left operand, not " + Py.typeName(needle));
            }
            return s.contains(n);
        }
        if (container instanceof Map<?, ?> m) {
            for (Object k : m.keySet()) {
                if (Py.eq(k, needle)) {
                    return true;
                }
            }
            return false;
        }
        if (container instanceof Undefined) {
            return false;
        }
        for (Object item : Py.iterate(container)) {
            if (Py.eq(item, needle)) {
                return true;
            }
        }
        return false;
    }
}
