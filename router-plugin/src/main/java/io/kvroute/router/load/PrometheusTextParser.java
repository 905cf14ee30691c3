package io.kvroute.router.load;

import static java.util.Objects.requireNonNull;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * it decodes anything: an unwanted line costs a scan to its newline (eight bytes at a time), a few
 * byte tests and no allocation. Only wanted samples are decoded (labels, value). {@code # HELP} and {@code # TYPE} lines are checked for shape
 * and otherwise skipped. The body is read as it arrives ({@link Stream}): lines are parsed in place in
 * the HTTP client's chunks, so a scrape allocates no buffer for its body; only a line cut by a chunk
 * boundary is copied.
 *
 * <p><b>Strictness.</b> A wanted sample line that does not follow the grammar (unterminated label
 * value, bad escape, missing value, a value that is not a float, {@code +Inf}, {@code -Inf} or
 * {@code NaN}) fails the whole exposition with {@link Malformed} naming the line: a half-read scrape
 * must not be mistaken for an idle engine. An unwanted sample line is only checked to start like a
 * metric name (so an HTML error page is malformed, not an empty exposition).
 * The static methods are pure and thread-safe; a {@link Stream} belongs to one response.
 */
final class PrometheusTextParser {
    /** Longest line read; longer is malformed (vLLM's longest, cache_config_info with ~25 labels, is under 1 KiB). */
    static final int MAX_LINE_BYTES = 1 << 16;
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
        if (length < 0 || length > text.length) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + text.length);
        }
        Stream stream = new Stream(new Wanted(wanted));
        stream.feed(ByteBuffer.wrap(text, 0, length));
        return stream.finish();
    }

    /** Convenience for tests and small inputs. */
    static Map<String, List<Sample>> parse(String text, Set<String> wanted) throws Malformed {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        return parse(b, b.length, wanted);
    }

    /** A set of wanted metric names, encoded once (a scraper keeps one per worker). Immutable. */
    static final class Wanted {
        private final byte[][] bytes;
        private final String[] names;

        Wanted(Set<String> wanted) {
            requireNonNull(wanted, "wanted");
            bytes = new byte[wanted.size()][];
            names = new String[wanted.size()];
            int k = 0;
            for (String w : wanted) {
                names[k] = w;
                bytes[k++] = w.getBytes(StandardCharsets.US_ASCII);
            }
        }
    }

    /**
     * One exposition read as it arrives, chunk by chunk, so a scrape never holds its whole body: complete
     * lines are parsed in place in the chunk, and only a line cut by a chunk boundary is copied (into a
     * carry buffer of at most {@link #MAX_LINE_BYTES}). Chunks may be heap or direct buffers; their
     * position and limit are left as they are. Not thread-safe: one per response, fed serially.
     */
    static final class Stream {
        private final Wanted wanted;
        private final Map<String, List<Sample>> out = new HashMap<>();
        private byte[] carry = new byte[0];
        private int carryLength;
        private int lineNo;

        Stream(Wanted wanted) {
            this.wanted = requireNonNull(wanted, "wanted");
        }

        /** Parses every line that {@code chunk} completes and keeps the unfinished tail for the next chunk. */
        void feed(ByteBuffer chunk) throws Malformed {
            int pos = chunk.position();
            int limit = chunk.limit();
            if (carryLength > 0) {
                int nl = indexOfNewline(chunk, pos, limit);
                if (nl < 0) {
                    appendCarry(chunk, pos, limit);
                    return;
                }
                appendCarry(chunk, pos, nl);
                parseCarry();
                pos = nl + 1;
            }
            while (pos < limit) {
                int nl = indexOfNewline(chunk, pos, limit);
                if (nl < 0) {
                    appendCarry(chunk, pos, limit);
                    return;
                }
                lineNo++;
                parseLine(chunk, pos, nl > pos && chunk.get(nl - 1) == '\r' ? nl - 1 : nl, lineNo, wanted, out);
                pos = nl + 1;
            }
        }

        /** The samples of the wanted names, after parsing a last line that has no newline. */
        Map<String, List<Sample>> finish() throws Malformed {
            if (carryLength > 0) {
                parseCarry();
            }
            return out;
        }

        private void parseCarry() throws Malformed {
            lineNo++;
            int end = carryLength > 0 && carry[carryLength - 1] == '\r' ? carryLength - 1 : carryLength;
            parseLine(ByteBuffer.wrap(carry), 0, end, lineNo, wanted, out);
            carryLength = 0;
        }

        private void appendCarry(ByteBuffer chunk, int from, int to) throws Malformed {
            int n = to - from;
            if (carryLength + n > MAX_LINE_BYTES) {
                throw new Malformed(lineNo + 1, "line longer than " + MAX_LINE_BYTES + " bytes");
            }
            if (carryLength + n > carry.length) {
                carry = java.util.Arrays.copyOf(carry, Math.min(MAX_LINE_BYTES, Math.max(256, 2 * (carryLength + n))));
            }
            chunk.get(from, carry, carryLength, n);
            carryLength += n;
        }

        /**
         * The first {@code '\n'} in {@code t[from..to)}, eight bytes at a time: every byte of an exposition
         * is scanned here, and a byte-wise loop was half the parsing time of a 60 KiB vLLM body. A byte
         * {@code b} of {@code x = word ^ 0x0A..} is zero exactly when {@code ~(((b & 0x7F) + 0x7F) | b | 0x7F)}
         * has bit 7 set; no carry crosses bytes, so the first set bit in memory order is the newline.
         */
        static int indexOfNewline(ByteBuffer t, int from, int to) {
            boolean bigEndian = t.order() == ByteOrder.BIG_ENDIAN;
            int i = from;
            for (; i + Long.BYTES <= to; i += Long.BYTES) {
                long x = t.getLong(i) ^ NEWLINES;
                long found = ~(((x & LOW_SEVEN_BITS) + LOW_SEVEN_BITS) | x | LOW_SEVEN_BITS);
                if (found != 0) {
                    return i + (bigEndian ? Long.numberOfLeadingZeros(found) : Long.numberOfTrailingZeros(found)) / Byte.SIZE;
                }
            }
            for (; i < to; i++) {
                if (t.get(i) == '\n') {
                    return i;
                }
            }
            return -1;
        }

        private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
        private static final long LOW_SEVEN_BITS = 0x7F7F7F7F7F7F7F7FL;
    }

    private static void parseLine(ByteBuffer t, int from, int to, int lineNo, Wanted wanted,
            Map<String, List<Sample>> out) throws Malformed {
        int p = skipBlanks(t, from, to);
        if (p == to) {
            return; // blank line
        }
        if (t.get(p) == '#') {
            checkComment(t, p + 1, to, lineNo);
            return;
        }
        if (!isNameChar(t.get(p), true)) {
            throw new Malformed(lineNo, "expected a metric name");
        }
        int which = matchAt(t, p, to, wanted.bytes);
        if (which < 0) {
            return;
        }
        String name = wanted.names[which];
        int nameEnd = p + wanted.bytes[which].length;
        Map<String, String> labels = Map.of();
        int q = nameEnd;
        if (q < to && t.get(q) == '{') {
            labels = new LinkedHashMap<>();
            q = parseLabels(t, q + 1, to, lineNo, labels);
        }
        q = skipBlanks(t, q, to);
        if (q == to) {
            throw new Malformed(lineNo, "sample of " + name + " has no value");
        }
        int valueEnd = q;
        while (valueEnd < to && t.get(valueEnd) != ' ' && t.get(valueEnd) != '\t') {
            valueEnd++;
        }
        double value = parseValue(t, q, valueEnd, lineNo);
        int rest = skipBlanks(t, valueEnd, to);
        if (rest < to) { // an optional integer timestamp in ms
            int tsEnd = rest;
            if (t.get(tsEnd) == '-') {
                tsEnd++;
            }
            int digits = tsEnd;
            while (tsEnd < to && t.get(tsEnd) >= '0' && t.get(tsEnd) <= '9') {
                tsEnd++;
            }
            if (tsEnd == digits || skipBlanks(t, tsEnd, to) != to) {
                throw new Malformed(lineNo, "trailing characters after the value of " + name);
            }
        }
        out.computeIfAbsent(name, n -> new ArrayList<>(4)).add(new Sample(name, labels, value));
    }

    /** {@code # HELP name ...} and {@code # TYPE name type}; any other comment is allowed. */
    private static void checkComment(ByteBuffer t, int from, int to, int lineNo) throws Malformed {
        int p = skipBlanks(t, from, to);
        boolean help = startsWith(t, p, to, "HELP ");
        boolean type = startsWith(t, p, to, "TYPE ");
        if (!help && !type) {
            return;
        }
        p = skipBlanks(t, p + 5, to);
        int nameEnd = p;
        while (nameEnd < to && isNameChar(t.get(nameEnd), nameEnd == p)) {
            nameEnd++;
        }
        if (nameEnd == p) {
            throw new Malformed(lineNo, (help ? "HELP" : "TYPE") + " without a metric name");
        }
        if (type) {
            int kind = skipBlanks(t, nameEnd, to);
            int kindEnd = kind;
            while (kindEnd < to && t.get(kindEnd) != ' ' && t.get(kindEnd) != '\t') {
                kindEnd++;
            }
            if (!isKnownType(t, kind, kindEnd) || skipBlanks(t, kindEnd, to) != to) {
                throw new Malformed(lineNo, "unknown metric type '" + string(t, kind, kindEnd, StandardCharsets.US_ASCII) + "'");
            }
        }
    }

    private static int parseLabels(ByteBuffer t, int p, int to, int lineNo, Map<String, String> labels) throws Malformed {
        while (true) {
            p = skipBlanks(t, p, to);
            if (p < to && t.get(p) == '}') {
                return p + 1;
            }
            int nameStart = p;
            while (p < to && isLabelChar(t.get(p), p == nameStart)) {
                p++;
            }
            if (p == nameStart) {
                throw new Malformed(lineNo, "expected a label name");
            }
            String labelName = string(t, nameStart, p, StandardCharsets.US_ASCII);
            p = skipBlanks(t, p, to);
            if (p >= to || t.get(p) != '=') {
                throw new Malformed(lineNo, "expected '=' after label " + labelName);
            }
            p = skipBlanks(t, p + 1, to);
            if (p >= to || t.get(p) != '"') {
                throw new Malformed(lineNo, "expected a quoted value for label " + labelName);
            }
            p++;
            StringBuilder value = null;
            int start = p;
            while (true) {
                if (p >= to) {
                    throw new Malformed(lineNo, "unterminated value of label " + labelName);
                }
                byte c = t.get(p);
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    if (value == null) {
                        value = new StringBuilder();
                    }
                    value.append(string(t, start, p, StandardCharsets.UTF_8));
                    if (p + 1 >= to) {
                        throw new Malformed(lineNo, "unterminated escape in label " + labelName);
                    }
                    byte e = t.get(p + 1);
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
            String tail = string(t, start, p, StandardCharsets.UTF_8);
            String v = value == null ? tail : value.append(tail).toString();
            if (labels.put(labelName, v) != null) {
                throw new Malformed(lineNo, "label " + labelName + " repeated");
            }
            if (labels.size() > MAX_LABELS) {
                throw new Malformed(lineNo, "more than " + MAX_LABELS + " labels");
            }
            p = skipBlanks(t, p + 1, to);
            if (p < to && t.get(p) == ',') {
                p++;
            } else if (p < to && t.get(p) == '}') {
                return p + 1;
            } else {
                throw new Malformed(lineNo, "expected ',' or '}' after label " + labelName);
            }
        }
    }

    private static double parseValue(ByteBuffer t, int from, int to, int lineNo) throws Malformed {
        String s = string(t, from, to, StandardCharsets.US_ASCII);
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

    private static final String[] TYPES = {"counter", "gauge", "histogram", "summary", "untyped"};

    private static boolean isKnownType(ByteBuffer t, int from, int to) {
        for (String type : TYPES) {
            if (type.length() == to - from && startsWith(t, from, to, type)) {
                return true;
            }
        }
        return false;
    }

    /** Decodes {@code t[from..to)}; the chunk's position and limit are left alone. */
    private static String string(ByteBuffer t, int from, int to, java.nio.charset.Charset charset) {
        if (t.hasArray()) {
            return new String(t.array(), t.arrayOffset() + from, to - from, charset);
        }
        byte[] copy = new byte[to - from];
        t.get(from, copy);
        return new String(copy, charset);
    }

    /**
     * The wanted name the sample line at {@code from} starts with, ended by its labels, a blank or the
     * line's end; -1 for an unwanted line. Tests the byte after each candidate's length first, which
     * rejects almost every histogram bucket line without comparing names.
     */
    private static int matchAt(ByteBuffer t, int from, int to, byte[][] wanted) {
        for (int i = 0; i < wanted.length; i++) {
            byte[] w = wanted[i];
            int end = from + w.length;
            if (end > to) {
                continue;
            }
            if (end < to) {
                byte next = t.get(end);
                if (next != '{' && next != ' ' && next != '\t') {
                    continue;
                }
            }
            int j = 0;
            while (j < w.length && t.get(from + j) == w[j]) {
                j++;
            }
            if (j == w.length) {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsWith(ByteBuffer t, int p, int to, String prefix) {
        if (to - p < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (t.get(p + i) != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int skipBlanks(ByteBuffer t, int p, int to) {
        while (p < to && (t.get(p) == ' ' || t.get(p) == '\t')) {
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
