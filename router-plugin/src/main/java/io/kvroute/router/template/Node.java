package io.kvroute.router.template;

import java.util.List;

/**
 * The immutable syntax tree a template compiles to: statements ({@link Stmt}) and expressions
 * ({@link Expr}). Built once per template by {@link Parser}; evaluated any number of times, from any
 * number of threads, by {@link Evaluator}.
 */
final class Node {

    private Node() {}

    sealed interface Stmt permits Text, Output, If, For, SetVar, SetAttr, SetBlock, MacroDef, Break, Continue {}

    record Text(String text) implements Stmt {}

    record Output(Expr expr) implements Stmt {}

    record If(List<Expr> conditions, List<List<Stmt>> bodies, List<Stmt> elseBody) implements Stmt {}

    record For(List<String> targets, Expr iterable, Expr filter, List<Stmt> body, List<Stmt> elseBody, int line)
            implements Stmt {}

    record SetVar(List<String> targets, Expr value, int line) implements Stmt {}

    /** {@code {% set ns.attr = value %}}. */
    record SetAttr(String name, String attr, Expr value, int line) implements Stmt {}

    record SetBlock(String name, List<Stmt> body) implements Stmt {}

    record MacroDef(String name, List<String> params, List<Expr> defaults, List<Stmt> body) implements Stmt {}

    record Break() implements Stmt {}

    record Continue() implements Stmt {}

    sealed interface Expr permits Literal, Name, GetAttr, GetItem, Slice, Call, Filter, Test, Unary, Binary, Compare,
            CondExpr, ListLit, TupleLit, DictLit {}

    record Literal(Object value) implements Expr {}

    record Name(String name, int line) implements Expr {}

    record GetAttr(Expr object, String name, int line) implements Expr {}

    record GetItem(Expr object, Expr key, int line) implements Expr {}

    /** {@code obj[start:stop:step]}; absent parts are null. */
    record Slice(Expr object, Expr start, Expr stop, Expr step) implements Expr {}

    record Kwarg(String name, Expr value) {}

    record Call(Expr callee, List<Expr> args, List<Kwarg> kwargs, int line) implements Expr {}

    record Filter(Expr value, String name, List<Expr> args, List<Kwarg> kwargs, int line) implements Expr {}

    record Test(Expr value, String name, List<Expr> args, boolean negated, int line) implements Expr {}

    /** {@code not}, {@code -}, {@code +}. */
    record Unary(String op, Expr operand) implements Expr {}

    /** Arithmetic, {@code ~}, {@code and}, {@code or}. */
    record Binary(String op, Expr left, Expr right, int line) implements Expr {}

    /** A comparison chain {@code a < b <= c}; ops include {@code in} and {@code not in}. */
    record Compare(Expr first, List<String> ops, List<Expr> rest, int line) implements Expr {}

    /** {@code then if test else otherwise}; {@code otherwise} null yields Undefined when false. */
    record CondExpr(Expr test, Expr then, Expr otherwise) implements Expr {}

    record ListLit(List<Expr> items) implements Expr {}

    record TupleLit(List<Expr> items) implements Expr {}

    record DictLit(List<Expr> keys, List<Expr> values) implements Expr {}
}
