package io.kvroute.router.template;

/** One lexer token; {@code text} is the decoded value for strings and the source text otherwise. */
record Token(Type type, String text, int line) {

    enum Type { TEXT, VAR_BEGIN, VAR_END, BLOCK_BEGIN, BLOCK_END, NAME, STRING, INT, FLOAT, OP, EOF }

    boolean is(Type t, String s) {
        return type == t && text.equals(s);
    }

    boolean isOp(String s) {
        return type == Type.OP && text.equals(s);
    }

    boolean isName(String s) {
        return type == Type.NAME && text.equals(s);
    }

    @Override
    public String toString() {
        return type + "'" + text + "'@" + line;
    }
}
