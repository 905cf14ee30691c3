package io.kvroute.router.ingress;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Counts the output tokens of one answer from the bytes the router relays, as they go by, so the tenant is charged
 * for what it was actually sent and not for protocol events.
 *
 * <p>A streamed answer (server-sent events) is counted per event. An event that states how many tokens the answer
 * has so far is exact: SGLang's {@code /generate} frames carry a cumulative {@code meta_info.completion_tokens}
 * (SGLang {@code python/sglang/srt/managers/tokenizer_manager.py}), and OpenAI-style streams carry
 * {@code usage.completion_tokens} in every chunk with {@code stream_options.continuous_usage_stats} and in a final
 * chunk of their own ({@code "choices":[]}) with {@code include_usage} (vLLM and SGLang
 * {@code entrypoints/openai/serving_chat.py}). The count rises to a cumulative figure, and settles to the final
 * usage chunk's, down as well as up (a chunk may carry several tokens, and a token may go out in no chunk at all:
 * vLLM holds back the control tokens of tool calls and reasoning). Any other event counts the entries of its
 * {@code token_ids} (vLLM {@code return_token_ids}), else one token when it carries generated output (a non-empty
 * {@code content}, {@code text}, {@code reasoning_content} or {@code reasoning}, a {@code tool_calls} entry, or
 * logprobs), else nothing: the role-only first chunk ({@code "delta":{"role":"assistant","content":""}}), a chunk
 * with only a {@code finish_reason}, an error event, a comment and {@code [DONE]} are not tokens.
 *
 * <p>A whole JSON answer is counted by its (last) {@code "completion_tokens"} field, matched across the buffers
 * without keeping the body.
 *
 * <p>Cost: one pass over the bytes looking for line ends; an event's fields are then read in place by one more
 * pass that skips string values (no parse, no allocation). Only an event split across two buffers is copied, into
 * a carry of at most {@link #MAX_CARRIED_EVENT_BYTES}.
 *
 * <p>Keys are matched only where JSON puts keys: inside a string every quote is escaped, so a generated text that
 * spells {@code "completion_tokens":} cannot be mistaken for one.
 *
 * <p>Not thread-safe: the one writer of a response feeds it.
 */
final class OutputTokenCounter {

    /** Bounds the bytes of one event kept while it is split across buffers; past it the event is judged on its head. */
    static final int MAX_CARRIED_EVENT_BYTES = 1 << 20;

    private static final byte[] DATA = ascii("data:");
    private static final byte[] DONE = ascii("[DONE]");
    private static final byte[] COMPLETION_TOKENS_KEY = ascii("\"completion_tokens\":");
    private static final byte[] COMPLETION_TOKENS = ascii("completion_tokens");
    private static final byte[] CHOICES = ascii("choices");
    private static final byte[] TOKEN_IDS = ascii("token_ids");
    private static final byte[] CONTENT = ascii("content");
    private static final byte[] TEXT = ascii("text");
    private static final byte[] REASONING_CONTENT = ascii("reasoning_content");
    private static final byte[] REASONING = ascii("reasoning");
    private static final byte[] TOOL_CALLS = ascii("tool_calls");
    private static final byte[] LOGPROBS = ascii("logprobs");

    private static final int UNKNOWN = 0;
    private static final int SSE = 1;
    private static final int JSON = 2;

    private int mode = UNKNOWN;
    private long counted;

    // SSE: the event that began in an earlier buffer, and whether the current line is still empty
    private byte[] carry = new byte[0];
    private int carried;
    private boolean lineEmpty = true;

    // JSON: how much of "completion_tokens": is matched, and the number being read after it (-1: none)
    private int keyMatched;
    private boolean afterKey;
    private long number = -1;

    /** Output tokens counted so far. */
    long counted() {
        return counted;
    }

    /**
     * Counts the tokens in {@code bytes} (read in place: its position is left alone) and returns how the count
     * changed: usually 0 or more, less than 0 when a final usage settles it lower.
     */
    long feed(ByteBuffer bytes) {
        if (bytes == null || !bytes.hasRemaining()) {
            return 0;
        }
        long before = counted;
        int from = bytes.position();
        if (mode == UNKNOWN) {
            from = sniff(bytes, from);
        }
        if (mode == SSE) {
            events(bytes, from, bytes.limit());
        } else if (mode == JSON) {
            json(bytes, from, bytes.limit());
        }
        return counted - before;
    }

    /** Decides the mode from the first non-blank byte: a JSON document, or else an event stream. */
    private int sniff(ByteBuffer b, int from) {
        for (int i = from; i < b.limit(); i++) {
            byte c = b.get(i);
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                mode = c == '{' || c == '[' ? JSON : SSE;
                return i;
            }
        }
        return b.limit();
    }

    // ---- event streams ----

    private void events(ByteBuffer b, int from, int to) {
        int start = from;
        for (int i = from; i < to; i++) {
            byte c = b.get(i);
            if (c == '\n') {
                if (lineEmpty) { // a blank line ends the event
                    if (carried > 0) {
                        append(b, start, i + 1);
                        event(ByteBuffer.wrap(carry, 0, carried), 0, carried);
                        carried = 0;
                    } else {
                        event(b, start, i + 1);
                    }
                    start = i + 1;
                }
                lineEmpty = true;
            } else if (c != '\r') {
                lineEmpty = false;
            }
        }
        if (start < to) {
            append(b, start, to);
        }
    }

    private void append(ByteBuffer b, int from, int to) {
        int n = Math.min(to - from, MAX_CARRIED_EVENT_BYTES - carried);
        if (n <= 0) {
            return;
        }
        if (carried + n > carry.length) {
            byte[] grown = new byte[Math.min(MAX_CARRIED_EVENT_BYTES, Math.max(carried + n, 2 * carry.length))];
            System.arraycopy(carry, 0, grown, 0, carried);
            carry = grown;
        }
        b.get(from, carry, carried, n);
        carried += n;
    }

    /** Counts one event, {@code [from, to)} of {@code b}. */
    private void event(ByteBuffer b, int from, int to) {
        int data = dataField(b, from, to);
        if (data < 0) {
            return; // a comment, or fields without data
        }
        data = skipBlanks(b, data, to);
        if (startsWith(b, data, to, DONE)) {
            return;
        }
        long completionTokens = -1;
        long tokenIds = -1;
        boolean usageOnly = false;
        boolean output = false;
        int i = data;
        while (i < to) {
            if (b.get(i) != '"') {
                i++;
                continue;
            }
            int key = i + 1;
            int end = closingQuote(b, key, to);
            if (end < 0) {
                break;
            }
            int colon = skipBlanks(b, end + 1, to);
            if (colon >= to || b.get(colon) != ':') {
                i = end + 1; // a string value, skipped whole
                continue;
            }
            int v = skipBlanks(b, colon + 1, to);
            i = colon + 1;
            if (v >= to) {
                break;
            }
            byte first = b.get(v);
            if (equals(b, key, end, COMPLETION_TOKENS)) {
                completionTokens = number(b, v, to);
            } else if (equals(b, key, end, CHOICES)) {
                usageOnly |= first == '[' && at(b, skipBlanks(b, v + 1, to), to) == ']';
            } else if (equals(b, key, end, TOKEN_IDS)) {
                if (first == '[') {
                    tokenIds = Math.max(0, tokenIds) + elements(b, v + 1, to);
                }
            } else if (equals(b, key, end, CONTENT) || equals(b, key, end, TEXT)
                    || equals(b, key, end, REASONING_CONTENT) || equals(b, key, end, REASONING)) {
                output |= first == '"' && at(b, v + 1, to) != '"';
            } else if (equals(b, key, end, TOOL_CALLS)) {
                output |= first == '[' && at(b, skipBlanks(b, v + 1, to), to) != ']';
            } else if (equals(b, key, end, LOGPROBS)) {
                output |= first == '{' || first == '[';
            }
        }
        if (completionTokens >= 0) {
            counted = usageOnly ? completionTokens : Math.max(counted, completionTokens);
        } else if (tokenIds >= 0) {
            counted += tokenIds;
        } else if (output) {
            counted++;
        }
    }

    /** Where the value of the event's first {@code data:} field starts, or -1 when it has none. */
    private static int dataField(ByteBuffer b, int from, int to) {
        int line = from;
        while (line < to) {
            if (startsWith(b, line, to, DATA)) {
                return line + DATA.length;
            }
            while (line < to && b.get(line) != '\n') {
                line++;
            }
            line++;
        }
        return -1;
    }

    // ---- whole JSON answers ----

    private void json(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            byte c = b.get(i);
            if (afterKey) {
                if (c >= '0' && c <= '9') {
                    number = (number < 0 ? 0 : number) * 10 + (c - '0');
                    if (number > 1_000_000_000_000L) {
                        number = -1; // not a token count
                        afterKey = false;
                    }
                    continue;
                }
                if (number < 0 && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
                    continue;
                }
                if (number >= 0) {
                    counted = number;
                }
                afterKey = false;
                number = -1;
            }
            if (c == COMPLETION_TOKENS_KEY[keyMatched]) {
                keyMatched++;
                if (keyMatched == COMPLETION_TOKENS_KEY.length) {
                    keyMatched = 0;
                    afterKey = true;
                }
            } else {
                keyMatched = c == '"' ? 1 : 0;
            }
        }
    }

    // ---- bytes ----

    private static int closingQuote(ByteBuffer b, int i, int to) {
        while (i < to) {
            byte c = b.get(i);
            if (c == '\\') {
                i += 2;
            } else if (c == '"') {
                return i;
            } else {
                i++;
            }
        }
        return -1;
    }

    private static int skipBlanks(ByteBuffer b, int i, int to) {
        while (i < to) {
            byte c = b.get(i);
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                return i;
            }
            i++;
        }
        return to;
    }

    private static int at(ByteBuffer b, int i, int to) {
        return i < to ? b.get(i) : -1;
    }

    private static boolean startsWith(ByteBuffer b, int at, int to, byte[] prefix) {
        if (at + prefix.length > to) {
            return false;
        }
        for (int j = 0; j < prefix.length; j++) {
            if (b.get(at + j) != prefix[j]) {
                return false;
            }
        }
        return true;
    }

    private static boolean equals(ByteBuffer b, int from, int to, byte[] word) {
        return to - from == word.length && startsWith(b, from, to, word);
    }

    /** A non-negative integer at {@code i}, or -1. */
    private static long number(ByteBuffer b, int i, int to) {
        long n = 0;
        int digits = 0;
        while (i < to && digits < 13 && b.get(i) >= '0' && b.get(i) <= '9') {
            n = n * 10 + (b.get(i) - '0');
            i++;
            digits++;
        }
        return digits == 0 ? -1 : n;
    }

    /** The entries of a flat array of numbers whose {@code [} is just before {@code i}. */
    private static long elements(ByteBuffer b, int i, int to) {
        i = skipBlanks(b, i, to);
        if (at(b, i, to) == ']') {
            return 0;
        }
        long n = 1;
        for (; i < to; i++) {
            byte c = b.get(i);
            if (c == ']') {
                return n;
            }
            if (c == ',') {
                n++;
            }
        }
        return n;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
