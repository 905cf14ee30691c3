package io.kvroute.router.template;

import io.kvroute.router.template.Node.*;
import io.kvroute.router.template.Py.Method;
import io.kvroute.router.template.Py.Namespace;
import io.kvroute.router.template.Py.Tuple;
import io.kvroute.router.template.Py.Undefined;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One render of a compiled tree: a tree walk over {@link Node} with jinja2's runtime semantics. Not
 * thread-safe; {@link ChatTemplate#render} makes one per call.
 *
 * <p>Scoping follows jinja2: {@code set} writes the innermost frame; every {@code for} iteration runs
 * in a fresh child frame (so a {@code set} inside a loop neither leaks out nor survives into the next
 * iteration); {@code if} opens no frame; a macro body runs in a child of the frame it was defined in,
 * resolving free names when called. {@code namespace} objects are the only state shared across frames.
 */
final class Evaluator {

    /** A loop's {@code loop} variable. */
    record LoopInfo(int index0, List<Object> items) {}

    /** A macro value: its definition and the frame it closes over. */
    record Macro(MacroDef def, Frame closure) {}

    static final class Frame {
        final Frame parent;
        final Map<String, Object> vars = new HashMap<>(8);

        Frame(Frame parent) {
            this.parent = parent;
        }
    }

    private enum Signal { NORMAL, BREAK, CONTINUE }

    private final Map<String, Object> context;
    private final Instant now;
    private final int maxOutputChars;
    private final StringBuilder out = new StringBuilder(4096);

    Evaluator(Map<String, Object> context, Instant now, int maxOutputChars) {
        this.context = context;
        this.now = now;
        this.maxOutputChars = maxOutputChars;
    }

    String render(List<Stmt> body) throws TemplateFailure {
        exec(body, new Frame(null), out);
        return out.toString();
    }

    Instant now() {
        return now;
    }

    private Signal exec(List<Stmt> body, Frame frame, StringBuilder sink) throws TemplateFailure {
        for (Stmt s : body) {
            Signal sig = exec(s, frame, sink);
            if (sig != Signal.NORMAL) {
                return sig;
            }
        }
        return Signal.NORMAL;
    }

    private Signal exec(Stmt s, Frame frame, StringBuilder sink) throws TemplateFailure {
        if (s instanceof Text t) {
            append(sink, t.text());
        } else if (s instanceof Output o) {
            append(sink, Py.str(eval(o.expr(), frame)));
        } else if (s instanceof If f) {
            for (int i = 0; i < f.conditions().size(); i++) {
                if (Py.truthy(eval(f.conditions().get(i), frame))) {
                    return exec(f.bodies().get(i), frame, sink);
                }
            }
            return exec(f.elseBody(), frame, sink);
        } else if (s instanceof For f) {
            return loop(f, frame, sink);
        } else if (s instanceof SetVar sv) {
            Object value = eval(sv.value(), frame);
            if (sv.targets().size() == 1) {
                frame.vars.put(sv.targets().get(0), value);
            } else {
                unpack(sv.targets(), value, frame);
            }
        } else if (s instanceof SetAttr sa) {
            Object target = lookup(sa.name(), frame);
            if (!(target instanceof Namespace ns)) {
                throw Py.typeError("cannot assign attribute on non-namespace object '" + sa.name() + "'");
            }
            ns.attrs.put(sa.attr(), eval(sa.value(), frame));
        } else if (s instanceof SetBlock sb) {
            StringBuilder captured = new StringBuilder();
            exec(sb.body(), frame, captured);
            frame.vars.put(sb.name(), captured.toString());
        } else if (s instanceof MacroDef m) {
            frame.vars.put(m.name(), new Macro(m, frame));
        } else if (s instanceof Break) {
            return Signal.BREAK;
        } else if (s instanceof Continue) {
            return Signal.CONTINUE;
        } else {
            throw new IllegalStateException("unknown statement " + s);
        }
        return Signal.NORMAL;
    }

    private void append(StringBuilder sink, String text) throws TemplateFailure {
        if (sink.length() + text.length() > maxOutputChars) {
            throw new TemplateFailure(Kind.LIMIT, "output exceeds " + maxOutputChars + " characters");
        }
        sink.append(text);
    }

    private Signal loop(For f, Frame frame, StringBuilder sink) throws TemplateFailure {
        List<Object> items = Py.iterate(eval(f.iterable(), frame));
        if (f.filter() != null) {
            List<Object> kept = new ArrayList<>();
            for (Object item : items) {
                Frame probe = new Frame(frame);
                bindTargets(f.targets(), item, probe);
                if (Py.truthy(eval(f.filter(), probe))) {
                    kept.add(item);
                }
            }
            items = kept;
        }
        if (items.isEmpty()) {
            return exec(f.elseBody(), new Frame(frame), sink);
        }
        for (int i = 0; i < items.size(); i++) {
            Frame iteration = new Frame(frame);
            bindTargets(f.targets(), items.get(i), iteration);
            iteration.vars.put("loop", new LoopInfo(i, items));
            if (exec(f.body(), iteration, sink) == Signal.BREAK) {
                break;
            }
        }
        return Signal.NORMAL;
    }

    private void bindTargets(List<String> targets, Object item, Frame frame) throws TemplateFailure {
        if (targets.size() == 1) {
            frame.vars.put(targets.get(0), item);
        } else {
            unpack(targets, item, frame);
        }
    }

    private static void unpack(List<String> targets, Object value, Frame frame) throws TemplateFailure {
        List<Object> parts = Py.iterate(value);
        if (parts.size() != targets.size()) {
            throw Py.typeError("cannot unpack " + parts.size() + " values into " + targets.size() + " names");
        }
        for (int i = 0; i < targets.size(); i++) {
            frame.vars.put(targets.get(i), parts.get(i));
        }
    }

    Object lookup(String name, Frame frame) {
        for (Frame f = frame; f != null; f = f.parent) {
            Object v = f.vars.get(name);
            if (v != null || f.vars.containsKey(name)) {
                return v;
            }
        }
        Object v = context.get(name);
        if (v != null || context.containsKey(name)) {
            return v;
        }
        // jinja2 resolves a name the render variables lack in the environment's globals
        return Builtins.GLOBALS.contains(name) ? new Py.GlobalFunction(name) : new Undefined(name);
    }

    // ---- expressions ------------------------------------------------------------------------------

    Object eval(Expr e, Frame frame) throws TemplateFailure {
        if (e instanceof Literal l) {
            return l.value();
        }
        if (e instanceof Name n) {
            return lookup(n.name(), frame);
        }
        if (e instanceof GetAttr g) {
            return Access.attr(eval(g.object(), frame), g.name());
        }
        if (e instanceof GetItem g) {
            return Access.item(eval(g.object(), frame), eval(g.key(), frame));
        }
        if (e instanceof Slice s) {
            return Access.slice(eval(s.object(), frame), opt(s.start(), frame), opt(s.stop(), frame),
                    opt(s.step(), frame));
        }
        if (e instanceof Binary b) {
            return binary(b, frame);
        }
        if (e instanceof Compare c) {
            Object left = eval(c.first(), frame);
            for (int i = 0; i < c.ops().size(); i++) {
                Object right = eval(c.rest().get(i), frame);
                if (!Operators.compare(c.ops().get(i), left, right)) {
                    return false;
                }
                left = right;
            }
            return true;
        }
        if (e instanceof Unary u) {
            Object v = eval(u.operand(), frame);
            return switch (u.op()) {
                case "not" -> !Py.truthy(v);
                case "-" -> Operators.negate(v);
                default -> Operators.plus(v);
            };
        }
        if (e instanceof CondExpr c) {
            if (Py.truthy(eval(c.test(), frame))) {
                return eval(c.then(), frame);
            }
            return c.otherwise() == null ? new Undefined("conditional") : eval(c.otherwise(), frame);
        }
        if (e instanceof Filter f) {
            return Filters.filter(f.name(), eval(f.value(), frame), evalAll(f.args(), frame), kwargs(f.kwargs(), frame),
                    this);
        }
        if (e instanceof Test t) {
            boolean r = Filters.test(t.name(), eval(t.value(), frame), evalAll(t.args(), frame));
            return t.negated() != r;
        }
        if (e instanceof Call c) {
            return call(c, frame);
        }
        if (e instanceof ListLit l) {
            return Collections.unmodifiableList(evalAll(l.items(), frame));
        }
        if (e instanceof TupleLit t) {
            return new Tuple(Collections.unmodifiableList(evalAll(t.items(), frame)));
        }
        if (e instanceof DictLit d) {
            Map<Object, Object> m = new LinkedHashMap<>();
            for (int i = 0; i < d.keys().size(); i++) {
                m.put(eval(d.keys().get(i), frame), eval(d.values().get(i), frame));
            }
            return Collections.unmodifiableMap(m);
        }
        throw new IllegalStateException("unknown expression " + e);
    }

    private Object opt(Expr e, Frame frame) throws TemplateFailure {
        return e == null ? null : eval(e, frame);
    }

    private List<Object> evalAll(List<Expr> exprs, Frame frame) throws TemplateFailure {
        List<Object> out = new ArrayList<>(exprs.size());
        for (Expr x : exprs) {
            out.add(eval(x, frame));
        }
        return out;
    }

    private Map<String, Object> kwargs(List<Kwarg> kwargs, Frame frame) throws TemplateFailure {
        if (kwargs.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Kwarg k : kwargs) {
            out.put(k.name(), eval(k.value(), frame));
        }
        return out;
    }

    private Object binary(Binary b, Frame frame) throws TemplateFailure {
        Object left = eval(b.left(), frame);
        switch (b.op()) {
            case "and":
                return Py.truthy(left) ? eval(b.right(), frame) : left;
            case "or":
                return Py.truthy(left) ? left : eval(b.right(), frame);
            case "~":
                return Py.str(left) + Py.str(eval(b.right(), frame));
            default:
                return Operators.arithmetic(b.op(), left, eval(b.right(), frame), maxOutputChars);
        }
    }

    private Object call(Call c, Frame frame) throws TemplateFailure {
        List<Object> args = evalAll(c.args(), frame);
        Map<String, Object> kwargs = kwargs(c.kwargs(), frame);
        if (c.callee() instanceof Name n) {
            Object fn = lookup(n.name(), frame);
            if (fn instanceof Macro m) {
                return callMacro(m, args, kwargs);
            }
            if (fn instanceof Py.GlobalFunction g) {
                return Methods.global(g.name(), args, kwargs, this);
            }
            if (fn instanceof Undefined) {
                // e.g. a macro called above its definition: jinja2 calls Undefined, which raises
                throw new TemplateFailure(Kind.UNDEFINED, "'" + n.name() + "' is undefined");
            }
            throw Py.typeError("'" + Py.typeName(fn) + "' object is not callable");
        }
        GetAttr g = (GetAttr) c.callee();
        Object self = eval(g.object(), frame);
        if (self instanceof Undefined u) {
            throw new TemplateFailure(Kind.UNDEFINED, "'" + u.name() + "' is undefined");
        }
        if (self instanceof LoopInfo loop && g.name().equals("cycle")) {
            if (args.isEmpty()) {
                throw Py.typeError("no items for cycling given");
            }
            return args.get(loop.index0() % args.size());
        }
        if (self instanceof Map<?, ?> m && !Methods.isDictMethod(g.name()) && m.containsKey(g.name())) {
            throw Py.typeError("'" + Py.typeName(m.get(g.name())) + "' object is not callable");
        }
        return Methods.call(self, g.name(), args, kwargs);
    }

    private Object callMacro(Macro m, List<Object> args, Map<String, Object> kwargs) throws TemplateFailure {
        MacroDef def = m.def();
        if (args.size() > def.params().size()) {
            throw Py.typeError("macro '" + def.name() + "' takes not more than " + def.params().size() + " argument(s)");
        }
        Frame frame = new Frame(m.closure());
        for (String k : kwargs.keySet()) {
            if (!def.params().contains(k)) {
                throw Py.typeError("macro '" + def.name() + "' takes no keyword argument '" + k + "'");
            }
        }
        for (int i = 0; i < def.params().size(); i++) {
            String p = def.params().get(i);
            Object v;
            if (i < args.size()) {
                v = args.get(i);
            } else if (kwargs.containsKey(p)) {
                v = kwargs.get(p);
            } else if (def.defaults().get(i) != null) {
                v = eval(def.defaults().get(i), frame);
            } else {
                v = new Undefined(p);
            }
            frame.vars.put(p, v);
        }
        StringBuilder captured = new StringBuilder();
        exec(def.body(), frame, captured);
        return captured.toString();
    }

    /** Attribute lookup on a loop variable (jinja2 {@code LoopContext}). */
    static Object loopAttr(LoopInfo loop, String name) {
        int n = loop.items().size();
        int i = loop.index0();
        return switch (name) {
            case "index" -> (long) i + 1;
            case "index0" -> (long) i;
            case "revindex" -> (long) (n - i);
            case "revindex0" -> (long) (n - i - 1);
            case "first" -> i == 0;
            case "last" -> i == n - 1;
            case "length" -> (long) n;
            case "depth" -> 1L;
            case "depth0" -> 0L;
            case "previtem" -> i > 0 ? loop.items().get(i - 1) : new Undefined("previtem");
            case "nextitem" -> i < n - 1 ? loop.items().get(i + 1) : new Undefined("nextitem");
            case "cycle" -> new Method(loop, "cycle");
            default -> new Undefined(name);
        };
    }
}
