package io.kvroute.router.template;

import java.util.HashSet;
import java.util.Set;

/**
 * The names this renderer implements; the parser refuses every other filter, test, method or global
 * at compile time, so an unknown construct marks the whole template unsupported instead of failing
 * (or, worse, rendering something else) on a later request.
 */
final class Builtins {

    static final Set<String> FILTERS = Set.of("trim", "length", "count", "tojson", "join", "default", "d", "lower",
            "upper", "capitalize", "title", "replace", "first", "last", "reverse", "list", "string", "int", "float",
            "abs", "items", "dictsort", "selectattr", "rejectattr", "select", "reject", "map", "unique", "sum",
            "round", "indent", "safe", "escape", "e", "min", "max", "attr");

    static final Set<String> TESTS = Set.of("defined", "undefined", "none", "string", "number", "integer", "float",
            "boolean", "true", "false", "mapping", "iterable", "sequence", "callable", "equalto", "eq", "==", "ne",
            "!=", "odd", "even", "divisibleby", "lower", "upper", "in", "gt", "lt", "ge", "le", ">", "<", ">=", "<=",
            "greaterthan", "lessthan", "sameas", "escaped");

    static final Set<String> GLOBALS = Set.of("raise_exception", "strftime_now", "namespace", "range", "dict");

    static final Set<String> METHODS;

    static {
        Set<String> m = new HashSet<>(Methods.STR);
        m.addAll(Methods.DICT);
        m.addAll(Methods.LIST);
        m.addAll(Methods.MUTATING);
        m.add("cycle");
        METHODS = Set.copyOf(m);
    }

    private Builtins() {}
}
