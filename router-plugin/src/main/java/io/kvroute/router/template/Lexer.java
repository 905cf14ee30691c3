package io.kvroute.router.template;

import io.kvroute.router.template.Token.Type;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a template into text and tag tokens with the whitespace rules of the environment that
 * transformers builds ({@code trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False}),
 * following jinja2 {@code lexer.py} {@code Lexer.tokeniter}:
 *
 * <ul>
 *   <li>newlines ({@code \r\n}, {@code \r}, {@code \n}) are normalised to {@code \n} and one trailing
 *       newline of the source is dropped;
 *   <li>{@code -} on an opening delimiter right-strips the preceding text (Python whitespace), {@code -}
 *       on a closing one skips the following whitespace;
 *   <li>lstrip_blocks: spaces before a block tag or comment that starts a line are removed (not before
 *       {@code {{}, and not with {@code +});
 *   <li>trim_blocks: one newline after {@code %}} or {@code #}} is removed;
 *   <li>inside a tag, a closing delimiter counts only when all brackets are balanced, so
 *       {@code {{ {'a': {'b': 1}} }}} is one expression.
 * </ul>
 */
final class Lexer {

    private static final String[] OPERATORS = {
        "//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]",
        "{", "}", ",", ".", ":", "|", ";"
    };

    private final String src;
    private final List<Token> out = new ArrayList<>();
    private int pos;
    private int line = 1;

    private Lexer(String src) {
        this.src = src;
    }

    static List<Token> tokenize(String source) throws TemplateFailure {
        Lexer lexer = new Lexer(normalize(source));
        lexer.run();
        return lexer.out;
    }

    /** jinja2 splits on {@code \r\n|\r|\n}, drops one trailing empty line, and joins with {@code \n}. */
    static String normalize(String source) {
        String s = source.indexOf('\r') < 0 ? source : source.replace("\r\n", "\n").replace('\r', '\n');
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    private void run() throws TemplateFailure {
        boolean lineStarting = true;
        while (pos < src.length()) {
            int open = nextOpen(pos);
            if (open < 0) {
                text(src.substring(pos));
                break;
            }
            char kind = src.charAt(open + 1);
            char sign = open + 2 < src.length() ? src.charAt(open + 2) : 0;
            String text = src.substring(pos, open);
            if (sign == '-') {
                text = Py.rstrip(text, null);
            } else if (sign != '+' && kind != '{') {
                int lineStart = text.lastIndexOf('\n') + 1;
                if ((lineStart > 0 || lineStarting) && allSpace(text, lineStart)) {
                    text = text.substring(0, lineStart);
                }
            }
            text(text);
            line += count(src, pos, open);
            pos = open + 2 + (sign == '-' || sign == '+' ? 1 : 0);
            if (kind == '#') {
                int close = src.indexOf("#}", pos);
                if (close < 0) {
                    throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "unclosed comment at line " + line);
                }
                boolean strip = close > pos && src.charAt(close - 1) == '-';
                boolean keep = close > pos && src.charAt(close - 1) == '+';
                line += count(src, pos, close);
                pos = close + 2;
                lineStarting = afterClose(strip, keep, true);
            } else {
                out.add(new Token(kind == '{' ? Type.VAR_BEGIN : Type.BLOCK_BEGIN, "", line));
                lineStarting = tag(kind == '{' ? '}' : '%');
            }
        }
        out.add(new Token(Type.EOF, "", line));
    }

    /** Skips whitespace after a closing delimiter; returns whether the next text starts a line. */
    private boolean afterClose(boolean strip, boolean keep, boolean block) {
        if (strip) {
            while (pos < src.length() && Py.isSpace(src.charAt(pos))) {
                if (src.charAt(pos) == '\n') {
                    line++;
                }
                pos++;
            }
            return pos > 0 && src.charAt(pos - 1) == '\n';
        }
        if (block && !keep && pos < src.length() && src.charAt(pos) == '\n') {
            pos++;
            line++;
            return true;
        }
        return false;
    }

    private int nextOpen(int from) {
        for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length(); i = src.indexOf('{', i + 1)) {
            char c = src.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
        }
        return -1;
    }

    /** Lexes the inside of a tag up to its balanced closing delimiter; returns lineStarting. */
    private boolean tag(char closeChar) throws TemplateFailure {
        int depth = 0;
        while (true) {
            while (pos < src.length() && Py.isSpace(src.charAt(pos))) {
                if (src.charAt(pos) == '\n') {
                    line++;
                }
                pos++;
            }
            if (pos >= src.length()) {
                throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "unclosed tag at line " + line);
            }
            if (depth == 0) {
                boolean strip = src.startsWith("-" + closeChar + "}", pos);
                boolean keep = src.startsWith("+" + closeChar + "}", pos);
                if (strip || keep || src.startsWith(closeChar + "}", pos)) {
                    pos += strip || keep ? 3 : 2;
                    out.add(new Token(closeChar == '}' ? Type.VAR_END : Type.BLOCK_END, "", line));
                    return afterClose(strip, keep, closeChar == '%');
                }
            }
            char c = src.charAt(pos);
            if (c == '\'' || c == '"') {
                string(c);
            } else if (Character.isDigit(c)) {
                number();
            } else if (c == '_' || Character.isLetter(c)) {
                int start = pos;
                while (pos < src.length() && (src.charAt(pos) == '_' || Character.isLetterOrDigit(src.charAt(pos)))) {
                    pos++;
                }
                out.add(new Token(Type.NAME, src.substring(start, pos), line));
            } else {
                String op = operator();
                if (op == null) {
                    throw new TemplateFailure(TemplateFailure.Kind.SYNTAX,
                            "unexpected character '" + c + "' at line " + line);
                }
                if (op.equals("(") || op.equals("[") || op.equals("{")) {
                    depth++;
                } else if (op.equals(")") || op.equals("]") || op.equals("}")) {
                    depth--;
                }
                out.add(new Token(Type.OP, op, line));
                pos += op.length();
            }
        }
    }

    private String operator() {
        for (String op : OPERATORS) {
            if (src.startsWith(op, pos)) {
                return op;
            }
        }
        return null;
    }

    private void number() {
        int start = pos;
        digits();
        boolean isFloat = false;
        if (pos + 1 < src.length() && src.charAt(pos) == '.' && Character.isDigit(src.charAt(pos + 1))) {
            pos++;
            digits();
            isFloat = true;
        }
        if (pos < src.length() && (src.charAt(pos) == 'e' || src.charAt(pos) == 'E')) {
            int save = pos;
            pos++;
            if (pos < src.length() && (src.charAt(pos) == '+' || src.charAt(pos) == '-')) {
                pos++;
            }
            if (pos < src.length() && Character.isDigit(src.charAt(pos))) {
                digits();
                isFloat = true;
            } else {
                pos = save;
            }
        }
        out.add(new Token(isFloat ? Type.FLOAT : Type.INT, src.substring(start, pos).replace("_", ""), line));
    }

    private void digits() {
        while (pos < src.length() && (Character.isDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
            pos++;
        }
    }

    /** A Python string literal: the escapes of {@code unicode-escape}, unknown escapes kept verbatim. */
    private void string(char quote) throws TemplateFailure {
        int startLine = line;
        StringBuilder sb = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= src.length()) {
                throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "unterminated string at line " + startLine);
            }
            char c = src.charAt(pos++);
            if (c == quote) {
                break;
            }
            if (c == '\n') {
                line++;
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= src.length()) {
                throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "unterminated string at line " + startLine);
            }
            char e = src.charAt(pos++);
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case '\\' -> sb.append('\\');
                case '\'' -> sb.append('\'');
                case '"' -> sb.append('"');
                case 'a' -> sb.append('\u0007');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'v' -> sb.append('\u000b');
                case '\n' -> line++;
                case 'x' -> sb.appendCodePoint(hex(2));
                case 'u' -> sb.appendCodePoint(hex(4));
                case 'U' -> sb.appendCodePoint(hex(8));
                default -> {
                    if (e >= '0' && e <= '7') {
                        int v = e - '0';
                        for (int k = 0; k < 2 && pos < src.length() && src.charAt(pos) >= '0' && src.charAt(pos) <= '7'; k++) {
                            v = v * 8 + (src.charAt(pos++) - '0');
                        }
                        sb.append((char) v);
                    } else {
                        sb.append('\\').append(e);
                    }
                }
            }
        }
        out.add(new Token(Type.STRING, sb.toString(), startLine));
    }

    private int hex(int n) throws TemplateFailure {
        if (pos + n > src.length()) {
            throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "truncated escape at line " + line);
        }
        try {
            int v = Integer.parseInt(src.substring(pos, pos + n), 16);
            pos += n;
            return v;
        } catch (NumberFormatException e) {
            throw new TemplateFailure(TemplateFailure.Kind.SYNTAX, "bad escape at line " + line);
        }
    }

    private void text(String text) {
        if (!text.isEmpty()) {
            out.add(new Token(Type.TEXT, text, line));
        }
    }

    private static boolean allSpace(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            if (!Py.isSpace(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static int count(String s, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            if (s.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }
}
