package io.kvroute.router.template;

import io.kvroute.router.template.Node.*;
import io.kvroute.router.template.TemplateFailure.Kind;
import io.kvroute.router.template.Token.Type;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Recursive-descent parser from lexer tokens to the {@link Node} tree, with jinja2's grammar and
 * precedence ({@code jinja2/parser.py}): conditional expression, {@code or}, {@code and}, {@code not},
 * comparisons (chained, with {@code in}/{@code not in}), {@code + -}, {@code ~}, {@code * / // %},
 * {@code **}, unary minus, then postfix ({@code .attr}, {@code [key]}, {@code [a:b:c]}, calls), and
 * filters and tests last, so {@code 'x' + y | trim} filters {@code y} only.
 *
 * <p>Fails closed: any tag, filter, test, method or global outside the implemented subset is a
 * {@link TemplateFailure} of a compile-time kind, raised here rather than at render time.
 */
final class Parser {

    private static final Set<String> END_WORDS = Set.of("elif", "else", "endif", "endfor", "endmacro", "endset",
            "endgeneration");

    private final List<Token> tokens;
    private int pos;
    private final Set<String> macroNames = new HashSet<>();
    private final List<Token> calledNames = new ArrayList<>();
    private int loopDepth;

    private Parser(List<Token> tokens) {
        this.tokens = tokens;
    }

    static List<Stmt> parse(String source) throws TemplateFailure {
        Parser p = new Parser(Lexer.tokenize(source));
        List<Stmt> body = p.body(Set.of());
        if (p.peek().type() != Type.EOF) {
            throw p.syntax("unexpected '" + p.peek().text() + "'");
        }
        for (Token call : p.calledNames) {
            if (!p.macroNames.contains(call.text()) && !Builtins.GLOBALS.contains(call.text())) {
                throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX,
                        "unknown global function '" + call.text() + "' at line " + call.line());
            }
        }
        return List.copyOf(body);
    }

    // ---- statements -------------------------------------------------------------------------------

    /** Statements until a block tag whose first word is in {@code stop} (left unconsumed after BLOCK_BEGIN). */
    private List<Stmt> body(Set<String> stop) throws TemplateFailure {
        List<Stmt> out = new ArrayList<>();
        while (true) {
            Token t = peek();
            switch (t.type()) {
                case EOF -> {
                    if (!stop.isEmpty()) {
                        throw syntax("unexpected end of template, expected one of " + stop);
                    }
                    return out;
                }
                case TEXT -> {
                    pos++;
                    out.add(new Text(t.text()));
                }
                case VAR_BEGIN -> {
                    pos++;
                    out.add(new Output(tupleOrExpr(true)));
                    expect(Type.VAR_END);
                }
                case BLOCK_BEGIN -> {
                    Token word = tokens.get(pos + 1);
                    if (word.type() == Type.NAME && stop.contains(word.text())) {
                        return out;
                    }
                    if (word.type() == Type.NAME && END_WORDS.contains(word.text())) {
                        throw syntax("unexpected '" + word.text() + "'");
                    }
                    pos++;
                    Stmt s = statement();
                    if (s != null) {
                        out.add(s);
                    }
                }
                default -> throw syntax("unexpected token " + t);
            }
        }
    }

    private Stmt statement() throws TemplateFailure {
        Token word = next();
        if (word.type() != Type.NAME) {
            throw syntax("expected a tag name");
        }
        switch (word.text()) {
            case "if":
                return ifStatement();
            case "for":
                return forStatement(word);
            case "set":
                return setStatement(word);
            case "macro":
                return macro();
            case "break":
            case "continue":
                if (loopDepth == 0) {
                    throw syntax("'" + word.text() + "' outside a loop");
                }
                expect(Type.BLOCK_END);
                return word.text().equals("break") ? new Break() : new Continue();
            case "generation": {
                // transformers' AssistantTracker tag: a no-op unless assistant masks are requested.
                expect(Type.BLOCK_END);
                List<Stmt> inner = body(Set.of("endgeneration"));
                closeTag("endgeneration");
                return new If(List.of(new Literal(true)), List.of(List.copyOf(inner)), List.of());
            }
            default:
                throw new TemplateFailure(Kind.UNSUPPORTED_TAG,
                        "unsupported tag '" + word.text() + "' at line " + word.line());
        }
    }

    private void closeTag(String name) throws TemplateFailure {
        expect(Type.BLOCK_BEGIN);
        Token t = next();
        if (!t.isName(name)) {
            throw syntax("expected '" + name + "'");
        }
        expect(Type.BLOCK_END);
    }

    private Stmt ifStatement() throws TemplateFailure {
        List<Expr> conditions = new ArrayList<>();
        List<List<Stmt>> bodies = new ArrayList<>();
        conditions.add(tupleOrExpr(false));
        expect(Type.BLOCK_END);
        while (true) {
            bodies.add(List.copyOf(body(Set.of("elif", "else", "endif"))));
            expect(Type.BLOCK_BEGIN);
            Token t = next();
            if (t.isName("elif")) {
                conditions.add(tupleOrExpr(false));
                expect(Type.BLOCK_END);
            } else if (t.isName("else")) {
                expect(Type.BLOCK_END);
                List<Stmt> elseBody = body(Set.of("endif"));
                closeTag("endif");
                return new If(List.copyOf(conditions), List.copyOf(bodies), List.copyOf(elseBody));
            } else {
                expect(Type.BLOCK_END);
                return new If(List.copyOf(conditions), List.copyOf(bodies), List.of());
            }
        }
    }

    private Stmt forStatement(Token word) throws TemplateFailure {
        List<String> targets = targets();
        if (!next().isName("in")) {
            throw syntax("expected 'in'");
        }
        Expr iterable = tupleOrExpr(false);
        Expr filter = null;
        if (peek().isName("if")) {
            pos++;
            filter = tupleOrExpr(false);
        }
        if (peek().isName("recursive")) {
            throw new TemplateFailure(Kind.UNSUPPORTED_TAG, "recursive for loops at line " + word.line());
        }
        expect(Type.BLOCK_END);
        loopDepth++;
        List<Stmt> body = body(Set.of("else", "endfor"));
        loopDepth--;
        expect(Type.BLOCK_BEGIN);
        List<Stmt> elseBody = List.of();
        if (next().isName("else")) {
            expect(Type.BLOCK_END);
            elseBody = List.copyOf(body(Set.of("endfor")));
            closeTag("endfor");
        } else {
            expect(Type.BLOCK_END);
        }
        return new For(targets, iterable, filter, List.copyOf(body), elseBody, word.line());
    }

    private List<String> targets() throws TemplateFailure {
        boolean paren = peek().isOp("(");
        if (paren) {
            pos++;
        }
        List<String> names = new ArrayList<>();
        do {
            Token n = next();
            if (n.type() != Type.NAME) {
                throw syntax("expected a name");
            }
            names.add(n.text());
        } while (peek().isOp(",") && next() != null);
        if (paren) {
            expectOp(")");
        }
        return List.copyOf(names);
    }

    private Stmt setStatement(Token word) throws TemplateFailure {
        if (tokens.get(pos + 1).isOp(".")) {
            String name = next().text();
            pos++;
            Token attr = next();
            expectOp("=");
            Expr value = tupleOrExpr(true);
            expect(Type.BLOCK_END);
            return new SetAttr(name, attr.text(), value, word.line());
        }
        List<String> targets = targets();
        if (peek().type() == Type.BLOCK_END) {
            if (targets.size() != 1) {
                throw syntax("block set takes one name");
            }
            pos++;
            List<Stmt> body = body(Set.of("endset"));
            closeTag("endset");
            return new SetBlock(targets.get(0), List.copyOf(body));
        }
        if (peek().isOp("|")) {
            throw new TemplateFailure(Kind.UNSUPPORTED_TAG, "filtered block set at line " + word.line());
        }
        expectOp("=");
        Expr value = tupleOrExpr(true);
        expect(Type.BLOCK_END);
        return new SetVar(targets, value, word.line());
    }

    private Stmt macro() throws TemplateFailure {
        Token name = next();
        if (name.type() != Type.NAME) {
            throw syntax("expected a macro name");
        }
        expectOp("(");
        List<String> params = new ArrayList<>();
        List<Expr> defaults = new ArrayList<>();
        while (!peek().isOp(")")) {
            if (!params.isEmpty()) {
                expectOp(",");
            }
            Token p = next();
            if (p.type() != Type.NAME) {
                throw syntax("expected a parameter name");
            }
            params.add(p.text());
            if (peek().isOp("=")) {
                pos++;
                defaults.add(expr(true));
            } else {
                if (!defaults.isEmpty() && defaults.get(defaults.size() - 1) != null) {
                    throw syntax("non-default argument follows default argument");
                }
                defaults.add(null);
            }
        }
        pos++;
        expect(Type.BLOCK_END);
        int savedDepth = loopDepth;
        loopDepth = 0;
        List<Stmt> body = body(Set.of("endmacro"));
        loopDepth = savedDepth;
        closeTag("endmacro");
        macroNames.add(name.text());
        return new MacroDef(name.text(), List.copyOf(params), java.util.Collections.unmodifiableList(defaults),
                List.copyOf(body));
    }

    // ---- expressions ------------------------------------------------------------------------------

    /** jinja2 {@code parse_tuple}: an expression, or a bare tuple {@code a, b}. */
    private Expr tupleOrExpr(boolean withCondExpr) throws TemplateFailure {
        Expr first = expr(withCondExpr);
        if (!peek().isOp(",")) {
            return first;
        }
        List<Expr> items = new ArrayList<>(List.of(first));
        while (peek().isOp(",")) {
            pos++;
            if (atExprEnd()) {
                break;
            }
            items.add(expr(withCondExpr));
        }
        return new TupleLit(List.copyOf(items));
    }

    private boolean atExprEnd() {
        Token t = peek();
        return t.type() == Type.VAR_END || t.type() == Type.BLOCK_END || t.isOp(")") || t.isOp("]") || t.isOp("}")
                || t.isOp("=") || t.isName("if") || t.isName("in");
    }

    private Expr expr(boolean withCondExpr) throws TemplateFailure {
        Expr e = or();
        if (!withCondExpr) {
            return e;
        }
        while (peek().isName("if")) {
            pos++;
            Expr test = or();
            Expr otherwise = null;
            if (peek().isName("else")) {
                pos++;
                otherwise = expr(true);
            }
            e = new CondExpr(test, e, otherwise);
        }
        return e;
    }

    private Expr or() throws TemplateFailure {
        Expr left = and();
        while (peek().isName("or")) {
            int line = next().line();
            left = new Binary("or", left, and(), line);
        }
        return left;
    }

    private Expr and() throws TemplateFailure {
        Expr left = not();
        while (peek().isName("and")) {
            int line = next().line();
            left = new Binary("and", left, not(), line);
        }
        return left;
    }

    private Expr not() throws TemplateFailure {
        if (peek().isName("not")) {
            pos++;
            return new Unary("not", not());
        }
        return compare();
    }

    private Expr compare() throws TemplateFailure {
        int line = peek().line();
        Expr first = math1();
        List<String> ops = new ArrayList<>();
        List<Expr> rest = new ArrayList<>();
        while (true) {
            Token t = peek();
            if (t.type() == Type.OP && Set.of("==", "!=", "<", "<=", ">", ">=").contains(t.text())) {
                pos++;
                ops.add(t.text());
            } else if (t.isName("in")) {
                pos++;
                ops.add("in");
            } else if (t.isName("not") && tokens.get(pos + 1).isName("in")) {
                pos += 2;
                ops.add("not in");
            } else {
                break;
            }
            rest.add(math1());
        }
        return ops.isEmpty() ? first : new Compare(first, List.copyOf(ops), List.copyOf(rest), line);
    }

    private Expr math1() throws TemplateFailure {
        Expr left = concat();
        while (peek().isOp("+") || peek().isOp("-")) {
            Token op = next();
            left = new Binary(op.text(), left, concat(), op.line());
        }
        return left;
    }

    private Expr concat() throws TemplateFailure {
        Expr left = math2();
        while (peek().isOp("~")) {
            Token op = next();
            left = new Binary("~", left, math2(), op.line());
        }
        return left;
    }

    private Expr math2() throws TemplateFailure {
        Expr left = pow();
        while (peek().isOp("*") || peek().isOp("/") || peek().isOp("//") || peek().isOp("%")) {
            Token op = next();
            left = new Binary(op.text(), left, pow(), op.line());
        }
        return left;
    }

    private Expr pow() throws TemplateFailure {
        Expr left = unary(true);
        while (peek().isOp("**")) {
            Token op = next();
            left = new Binary("**", left, unary(true), op.line());
        }
        return left;
    }

    private Expr unary(boolean withFilter) throws TemplateFailure {
        Expr node;
        if (peek().isOp("-") || peek().isOp("+")) {
            String op = next().text();
            node = new Unary(op, unary(false));
        } else {
            node = postfix(primary());
        }
        return withFilter ? filters(node) : node;
    }

    private Expr primary() throws TemplateFailure {
        Token t = next();
        switch (t.type()) {
            case NAME:
                switch (t.text()) {
                    case "true", "True":
                        return new Literal(Boolean.TRUE);
                    case "false", "False":
                        return new Literal(Boolean.FALSE);
                    case "none", "None":
                        return new Literal(null);
                    default:
                        if (peek().isOp("(")) {
                            calledNames.add(t);
                        }
                        return new Name(t.text(), t.line());
                }
            case STRING: {
                StringBuilder sb = new StringBuilder(t.text());
                while (peek().type() == Type.STRING) {
                    sb.append(next().text());
                }
                return new Literal(sb.toString());
            }
            case INT:
                try {
                    return new Literal(Long.parseLong(t.text()));
                } catch (NumberFormatException e) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX, "integer literal out of range: " + t.text());
                }
            case FLOAT:
                return new Literal(Double.parseDouble(t.text()));
            case OP:
                if (t.isOp("(")) {
                    if (peek().isOp(")")) {
                        pos++;
                        return new TupleLit(List.of());
                    }
                    Expr first = expr(true);
                    if (peek().isOp(")")) {
                        pos++;
                        return first;
                    }
                    List<Expr> items = new ArrayList<>(List.of(first));
                    while (peek().isOp(",")) {
                        pos++;
                        if (peek().isOp(")")) {
                            break;
                        }
                        items.add(expr(true));
                    }
                    expectOp(")");
                    return new TupleLit(List.copyOf(items));
                }
                if (t.isOp("[")) {
                    List<Expr> items = new ArrayList<>();
                    while (!peek().isOp("]")) {
                        if (!items.isEmpty()) {
                            expectOp(",");
                            if (peek().isOp("]")) {
                                break;
                            }
                        }
                        items.add(expr(true));
                    }
                    pos++;
                    return new ListLit(List.copyOf(items));
                }
                if (t.isOp("{")) {
                    List<Expr> keys = new ArrayList<>();
                    List<Expr> values = new ArrayList<>();
                    while (!peek().isOp("}")) {
                        if (!keys.isEmpty()) {
                            expectOp(",");
                            if (peek().isOp("}")) {
                                break;
                            }
                        }
                        keys.add(expr(true));
                        expectOp(":");
                        values.add(expr(true));
                    }
                    pos++;
                    return new DictLit(List.copyOf(keys), List.copyOf(values));
                }
                throw syntax("unexpected '" + t.text() + "'");
            default:
                throw syntax("unexpected " + t);
        }
    }

    private Expr postfix(Expr node) throws TemplateFailure {
        while (true) {
            Token t = peek();
            if (t.isOp(".")) {
                pos++;
                Token name = next();
                if (name.type() == Type.NAME) {
                    node = new GetAttr(node, name.text(), name.line());
                } else if (name.type() == Type.INT) {
                    node = new GetItem(node, new Literal(Long.parseLong(name.text())), name.line());
                } else {
                    throw syntax("expected an attribute name");
                }
            } else if (t.isOp("[")) {
                pos++;
                node = subscript(node, t.line());
            } else if (t.isOp("(")) {
                node = call(node);
            } else {
                return node;
            }
        }
    }

    private Expr subscript(Expr node, int line) throws TemplateFailure {
        Expr[] parts = new Expr[3];
        int part = 0;
        boolean slice = false;
        while (!peek().isOp("]")) {
            if (peek().isOp(":")) {
                pos++;
                slice = true;
                part++;
                if (part > 2) {
                    throw syntax("too many ':' in a slice");
                }
                continue;
            }
            if (peek().isOp(",")) {
                throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX, "tuple subscripts at line " + line);
            }
            parts[part] = expr(true);
        }
        pos++;
        if (!slice) {
            if (parts[0] == null) {
                throw syntax("empty subscript");
            }
            return new GetItem(node, parts[0], line);
        }
        return new Slice(node, parts[0], parts[1], parts[2]);
    }

    private Call call(Expr callee) throws TemplateFailure {
        int line = next().line();
        List<Expr> args = new ArrayList<>();
        List<Kwarg> kwargs = new ArrayList<>();
        argList(args, kwargs);
        if (callee instanceof GetAttr g && !Builtins.METHODS.contains(g.name())) {
            throw new TemplateFailure(Kind.UNSUPPORTED_METHOD, "unsupported method '" + g.name() + "' at line " + line);
        }
        if (!(callee instanceof Name) && !(callee instanceof GetAttr)) {
            throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX, "call of a computed value at line " + line);
        }
        return new Call(callee, List.copyOf(args), List.copyOf(kwargs), line);
    }

    /** After '(' up to and including ')'. */
    private void argList(List<Expr> args, List<Kwarg> kwargs) throws TemplateFailure {
        while (!peek().isOp(")")) {
            if (!args.isEmpty() || !kwargs.isEmpty()) {
                expectOp(",");
                if (peek().isOp(")")) {
                    break;
                }
            }
            if (peek().isOp("*") || peek().isOp("**")) {
                throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX, "*args/**kwargs at line " + peek().line());
            }
            if (peek().type() == Type.NAME && tokens.get(pos + 1).isOp("=")) {
                String name = next().text();
                pos++;
                kwargs.add(new Kwarg(name, expr(true)));
            } else {
                if (!kwargs.isEmpty()) {
                    throw syntax("positional argument follows keyword argument");
                }
                args.add(expr(true));
            }
        }
        pos++;
    }

    private Expr filters(Expr node) throws TemplateFailure {
        while (true) {
            Token t = peek();
            if (t.isOp("|")) {
                pos++;
                Token name = next();
                if (name.type() != Type.NAME) {
                    throw syntax("expected a filter name");
                }
                if (!Builtins.FILTERS.contains(name.text())) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_FILTER,
                            "unsupported filter '" + name.text() + "' at line " + name.line());
                }
                List<Expr> args = new ArrayList<>();
                List<Kwarg> kwargs = new ArrayList<>();
                if (peek().isOp("(")) {
                    pos++;
                    argList(args, kwargs);
                }
                node = new Filter(node, name.text(), List.copyOf(args), List.copyOf(kwargs), name.line());
            } else if (t.isName("is")) {
                pos++;
                boolean negated = false;
                if (peek().isName("not")) {
                    pos++;
                    negated = true;
                }
                Token name = next();
                if (name.type() != Type.NAME && !(name.type() == Type.OP && Set.of("==", "!=", "<", ">", "<=", ">=")
                        .contains(name.text()))) {
                    throw syntax("expected a test name");
                }
                String testName = name.type() == Type.NAME ? name.text() : name.text();
                if (name.type() == Type.NAME && Set.of("none", "true", "false").contains(testName)) {
                    testName = testName.toLowerCase();
                }
                if (!Builtins.TESTS.contains(testName)) {
                    throw new TemplateFailure(Kind.UNSUPPORTED_TEST,
                            "unsupported test '" + testName + "' at line " + name.line());
                }
                List<Expr> args = new ArrayList<>();
                Token a = peek();
                if (a.isOp("(")) {
                    pos++;
                    List<Kwarg> kwargs = new ArrayList<>();
                    argList(args, kwargs);
                    if (!kwargs.isEmpty()) {
                        throw new TemplateFailure(Kind.UNSUPPORTED_SYNTAX, "keyword arguments to a test");
                    }
                } else if ((a.type() == Type.NAME || a.type() == Type.STRING || a.type() == Type.INT
                        || a.type() == Type.FLOAT || a.isOp("[") || a.isOp("{"))
                        && !a.isName("else") && !a.isName("or") && !a.isName("and")) {
                    if (a.isName("is")) {
                        throw syntax("'is' cannot be a test argument");
                    }
                    args.add(postfix(primary()));
                }
                node = new Test(node, testName, List.copyOf(args), negated, name.line());
            } else if (t.isOp("(")) {
                node = call(node);
            } else {
                return node;
            }
        }
    }

    // ---- token helpers ----------------------------------------------------------------------------

    private Token peek() {
        return tokens.get(pos);
    }

    private Token next() {
        return tokens.get(pos++);
    }

    private void expect(Type type) throws TemplateFailure {
        Token t = next();
        if (t.type() != type) {
            throw syntax("expected " + type + " but found " + t);
        }
    }

    private void expectOp(String op) throws TemplateFailure {
        Token t = next();
        if (!t.isOp(op)) {
            throw syntax("expected '" + op + "' but found " + t);
        }
    }

    private TemplateFailure syntax(String message) {
        return new TemplateFailure(Kind.SYNTAX, message + " at line " + tokens.get(Math.max(0, pos - 1)).line());
    }
}
