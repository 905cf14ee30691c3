package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A small strict parser for the Prometheus text exposition format 0.0.4, the format vLLM, SGLang and
 * TensorRT-LLM serve on {@code /metrics} (all through Python's prometheus_client). No maintained Java
 * parser of this format exists on Maven Central: the Prometheus Java client ships writers only
 * ({@code prometheus-metrics-exposition-textformats}).
 *
 * <p><b>Cost.</b> A vLLM exposition is mostly histogram buckets the router never reads, so the parser
 * works on the raw bytes and compares each sample line's metric name against the wanted set before
 * it decodes anything: an unwanted line costs one scan to its newline and no allocation. Only wanted
 * samples are decoded (labels, value). {@code # HELP} and {@code # TYPE} lines are checked for shape
 * and otherwise skipped.
 *
 * <p><b>Strictness.</b> A wanted sample line that does not follow the grammar (unterminated label
 * value, bad escape, missing value, a value that is not a float, {@code +Inf}, {@code -Inf} or
 * {@code NaN}) fails the whole exposition with {@link Malformed} naming the line: a half-read scrape
 * must not be mistaken for an idle engine. Unwanted lines are only checked for a valid metric name.
 * Pure and stateless; thread-safe.
 */
final class PrometheusTextParser {
    /** Labels kept per sample; a wanted series with more is malformed (vLLM's cache_config_info has ~25). */
    static final int MAX_LABELS = 64;

    /** One decoded sample. */
    record Sample(String name, Map<String, String> labels, double value) {}

    /** The scrape could not be read; {@code line} is 1-based. */
    static final class Malformed extends Exception {
        final int line;

        Malformed(int line, String message) {
            super("line " + line + ": " + message, null, false, false);
            this.line = line;
        }
    }

    private PrometheusTextParser() {}

    /** The samples of the wanted metric names in {@code text[0..length)}, grouped by name in exposition order. */
    static Map<String, List<Sample>> parse(byte[] text, int length, Set<String> wanted) throws Malformed {
        requireNonNull(text, "text");
        requireNonNull(wanted, "wanted");
        if (length < 0 || length > text.length) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + text.length);
        }
        byte[][] wantedBytes = new byte[wanted.size()][];
        String[] wantedNames = new String[wanted.size()];
        int k = 0;
        for (String w : wanted) {
            wantedNames[k] = w;
            wantedBytes[k++] = w.getBytes(StandardCharsets.US_ASCII);
        }
        Map<String, List<Sample>> out = new HashMap<>();
        int pos = 0;
        int lineNo = 0;
        while (pos < length) {
            lineNo++;
            int end = pos;
            while (end < length && text[end] != '\n') {
                end++;
            }
            int lineEnd = end > pos && text[end - 1] == '\r' ? end - 1 : end;
            parseLine(text, pos, lineEnd, lineNo, wantedBytes, wantedNames, out);
            pos = end + 1;
        }
        return out;
    }

    /** Convenience for tests and small inputs. */
    static Map<String, List<Sample>> parse(String text, Set<String> wanted) throws Malformed {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        return parse(b, b.length, wanted);
    }

    private static void parseLine(byte[] t, int from, int to, int lineNo, byte[][] wantedBytes, String[] wantedNames,
            Map<String, List<Sample>> out) throws Malformed {
        int p = skipBlanks(t, from, to);
        if (p == to) {
            return; // blank line
        }
        if (t[p] == '#') {
            checkComment(t, p + 1, to, lineNo);
            return;
        }
        int nameEnd = p;
        while (nameEnd < to && isNameChar(t[nameEnd], nameEnd == p)) {
            nameEnd++;
        }
        if (nameEnd == p) {
            throw new Malformed(lineNo, "expected a metric name");
        }
        if (nameEnd < to && t[nameEnd] != '{' && t[nameEnd] != ' ' && t[nameEnd] != '\t') {
            throw new Malformed(lineNo, "invalid character in metric name");
        }
        int which = match(t, p, nameEnd, wantedBytes);
        if (which < 0) {
            return;
        }
        String name = wantedNames[which];
        Map<String, String> labels = Map.of();
        int q = nameEnd;
        if (q < to && t[q] == '{') {
            labels = new LinkedHashMap<>();
            q = parseLabels(t, q + 1, to, lineNo, labels);
        }
        q = skipBlanks(t, q, to);
        if (q == to) {
            throw new Malformed(lineNo, "sample of " + name + " has no value");
        }
        int valueEnd = q;
        while (valueEnd < to && t[valueEnd] != ' ' && t[valueEnd] != '\t') {
            valueEnd++;
        }
        double value = parseValue(t, q, valueEnd, lineNo);
        int rest = skipBlanks(t, valueEnd, to);
        if (rest < to) { // an optional integer timestamp in ms
            int tsEnd = rest;
            if (t[tsEnd] == '-') {
                tsEnd++;
            }
            int digits = tsEnd;
            while (tsEnd < to && t[tsEnd] >= '0' && t[tsEnd] <= '9') {
                tsEnd++;
            }
            if (tsEnd == digits || skipBlanks(t, tsEnd, to) != to) {
                throw new Malformed(lineNo, "trailing characters after the value of " + name);
            }
        }
        out.computeIfAbsent(name, n -> new ArrayList<>(4)).add(new Sample(name, labels, value));
    }

    /** {@code # HELP name ...} and {@code # TYPE name type}; any other comment is allowed. */
    private static void checkComment(byte[] t, int from, int to, int lineNo) throws Malformed {
        int p = skipBlanks(t, from, to);
        boolean help = startsWith(t, p, to, "HELP ");
        boolean type = startsWith(t, p, to, "TYPE ");
        if (!help && !type) {
            return;
        }
        p = skipBlanks(t, p + 5, to);
        int nameEnd = p;
        while (nameEnd < to && isNameChar(t[nameEnd], nameEnd == p)) {
            nameEnd++;
        }
        if (nameEnd == p) {
            throw new Malformed(lineNo, (help ? "HELP" : "TYPE") + " without a metric name");
        }
        if (type) {
            int kind = skipBlanks(t, nameEnd, to);
            int kindEnd = kind;
            while (kindEnd < to && t[kindEnd] != ' ' && t[kindEnd] != '\t') {
                kindEnd++;
            }
            String k = new String(t, kind, kindEnd - kind, StandardCharsets.US_ASCII);
            if (!Set.of("counter", "gauge", "histogram", "summary", "untyped").contains(k)
                    || skipBlanks(t, kindEnd, to) != to) {
                throw new Malformed(lineNo, "unknown metric type '" + k + "'");
            }
        }
    }

    private static int parseLabels(byte[] t, int p, int to, int lineNo, Map<String, String> labels) throws Malformed {
        while (true) {
            p = skipBlanks(t, p, to);
            if (p < to && t[p] == '}') {
                return p + 1;
            }
            int nameStart = p;
            while (p < to && isLabelChar(t[p], p == nameStart)) {
                p++;
            }
            if (p == nameStart) {
                throw new Malformed(lineNo, "expected a label name");
            }
            String labelName = new String(t, nameStart, p - nameStart, StandardCharsets.US_ASCII);
            p = skipBlanks(t, p, to);
            if (p >= to || t[p] != '=') {
                throw new Malformed(lineNo, "expected '=' after label " + labelName);
            }
            p = skipBlanks(t, p + 1, to);
            if (p >= to || t[p] != '"') {
                throw new Malformed(lineNo, "expected a quoted value for label " + labelName);
            }
            p++;
            StringBuilder value = null;
            int start = p;
            while (true) {
                if (p >= to) {
                    throw new Malformed(lineNo, "unterminated value of label " + labelName);
                }
                byte c = t[p];
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    if (value == null) {
                        value = new StringBuilder();
                    }
                    value.append(new String(t, start, p - start, StandardCharsets.UTF_8));
                    if (p + 1 >= to) {
                        throw new Malformed(lineNo, "unterminated escape in label " + labelName);
                    }
                    byte e = t[p + 1];
                    switch (e) {
                        case '\\' -> value.append('\\');
                        case '"' -> value.append('"');
                        case 'n' -> value.append('\n');
                        default -> throw new Malformed(lineNo, "bad escape \\" + (char) e + " in label " + labelName);
                    }
                    p += 2;
                    start = p;
                    continue;
                }
                p++;
            }
            String tail = new String(t, start, p - start, StandardCharsets.UTF_8);
            String v = value == null ? tail : value.append(tail).toString();
            if (labels.put(labelName, v) != null) {
                throw new Malformed(lineNo, "label " + labelName + " repeated");
            }
            if (labels.size() > MAX_LABELS) {
                throw new Malformed(lineNo, "more than " + MAX_LABELS + " labels");
            }
            p = skipBlanks(t, p + 1, to);
            if (p < to && t[p] == ',') {
                p++;
            } else if (p < to && t[p] == '}') {
                return p + 1;
            } else {
                throw new Malformed(lineNo, "expected ',' or '}' after label " + labelName);
            }
        }
    }

    private static double parseValue(byte[] t, int from, int to, int lineNo) throws Malformed {
        String s = new String(t, from, to - from, StandardCharsets.US_ASCII);
        switch (s) {
            case "+Inf", "Inf" -> {
                return Double.POSITIVE_INFINITY;
            }
            case "-Inf" -> {
                return Double.NEGATIVE_INFINITY;
            }
            case "NaN" -> {
                return Double.NaN;
            }
            default -> { }
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
                throw new Malformed(lineNo, "value '" + s + "' is not a number");
            }
        }
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new Malformed(lineNo, "value '" + s + "' is not a number");
        }
    }

    private static int match(byte[] t, int from, int to, byte[][] wanted) {
        int len = to - from;
        for (int i = 0; i < wanted.length; i++) {
            byte[] w = wanted[i];
            if (w.length != len) {
                continue;
            }
            int j = 0;
            while (j < len && t[from + j] == w[j]) {
                j++;
            }
            if (j == len) {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsWith(byte[] t, int p, int to, String prefix) {
        if (to - p < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (t[p + i] != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int skipBlanks(byte[] t, int p, int to) {
        while (p < to && (t[p] == ' ' || t[p] == '\t')) {
            p++;
        }
        return p;
    }

    /** {@code [a-zA-Z_:][a-zA-Z0-9_:]*}. */
    private static boolean isNameChar(byte c, boolean first) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
    }

    /** {@code [a-zA-Z_][a-zA-Z0-9_]*}. */
    private static boolean isLabelChar(byte c, boolean first) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
    }
}
