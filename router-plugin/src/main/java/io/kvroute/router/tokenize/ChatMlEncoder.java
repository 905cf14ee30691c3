package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Native Java rendering of the Qwen3 ChatML chat template ({@code tokenizer_config.json} of Qwen3,
 * fingerprint in {@link ChatTemplates}), line for line, so that {@link #render} is byte-identical to
 * HF transformers' {@code apply_chat_template} (jinja2, trim_blocks, lstrip_blocks) for every input it
 * accepts. Checked against reference strings rendered by the real template with Python jinja2
 * ({@code src/test/resources/chatml/}).
 *
 * <p>What the template does, and so what this class does:
 * <ul>
 *   <li>a leading system message is emitted first; a later system message is emitted in place;</li>
 *   <li>the "last query" is the last user message whose content is not wrapped in
 *       {@code <tool_response>...</tool_response>}; assistant turns after it keep their reasoning as a
 *       {@code <think>} block (the final message always does), earlier ones lose it;</li>
 *   <li>reasoning comes from {@code reasoning_content} when present and non-null, otherwise it is cut
 *       out of the content around {@code </think>} (Python {@code split}/{@code strip('\n')} semantics);</li>
 *   <li>consecutive {@code tool} messages share one {@code user} turn of {@code <tool_response>} blocks;</li>
 *   <li>roles other than system/user/assistant/tool render nothing;</li>
 *   <li>{@code add_generation_prompt} appends {@code <|im_start|>assistant\n}, plus the empty think
 *       block when {@code enable_thinking} is false.</li>
 * </ul>
 * Not rendered (throws {@link UnsupportedChatException}): assistant {@code tool_calls} (they need
 * Python's {@code json.dumps} formatting), the {@code tools} preamble (not an input here), and any
 * non-string content or reasoning, where jinja2 would fail or stringify differently.
 *
 * <p>Immutable and thread-safe; the text encoder it is given must be thread-safe too.
 */
public final class ChatMlEncoder implements ChatEncoder {

    private static final String IM_START = "<|im_start|>";
    private static final String IM_END = "<|im_end|>";
    private static final String THINK_OPEN = "<think>";
    private static final String THINK_CLOSE = "</think>";

    private final Function<String, int[]> textEncoder;

    /** @param textEncoder tokenizes a rendered prompt (no special tokens added, no truncation) */
    public ChatMlEncoder(Function<String, int[]> textEncoder) {
        this.textEncoder = requireNonNull(textEncoder, "textEncoder");
    }

    @Override
    public int[] encode(JsonNode messages, boolean addGenerationPrompt, boolean enableThinking) {
        return textEncoder.apply(render(messages, addGenerationPrompt, enableThinking));
    }

    @Override
    public String render(JsonNode messages, boolean addGenerationPrompt, boolean enableThinking) {
        List<Message> msgs = parse(messages);
        StringBuilder out = new StringBuilder(estimateLength(msgs));
        if (msgs.get(0).role.equals("system")) {
            out.append(IM_START).append("system\n").append(msgs.get(0).requireContent(0)).append(IM_END).append('\n');
        }
        int lastQueryIndex = lastQueryIndex(msgs);
        for (int i = 0; i < msgs.size(); i++) {
            Message m = msgs.get(i);
            boolean last = i == msgs.size() - 1;
            switch (m.role) {
                case "user" -> appendTurn(out, m.role, m.requireContent(i));
                case "system" -> {
                    if (i > 0) {
                        appendTurn(out, m.role, m.requireContent(i));
                    }
                }
                case "assistant" -> appendAssistant(out, m, i, last, lastQueryIndex);
                case "tool" -> {
                    if (i == 0 || !msgs.get(i - 1).role.equals("tool")) {
                        out.append(IM_START).append("user");
                    }
                    out.append("\n<tool_response>\n").append(m.requireContent(i)).append("\n</tool_response>");
                    if (last || !msgs.get(i + 1).role.equals("tool")) {
                        out.append(IM_END).append('\n');
                    }
                }
                default -> {
                    // The template has no branch for other roles: they render nothing.
                }
            }
        }
        if (addGenerationPrompt) {
            out.append(IM_START).append("assistant\n");
            if (!enableThinking) {
                out.append("<think>\n\n</think>\n\n");
            }
        }
        return out.toString();
    }

    private static void appendTurn(StringBuilder out, String role, String content) {
        out.append(IM_START).append(role).append('\n').append(content).append(IM_END).append('\n');
    }

    private static void appendAssistant(StringBuilder out, Message m, int index, boolean last, int lastQueryIndex) {
        String content = m.requireContent(index);
        String reasoning = "";
        if (m.reasoning != null) {
            reasoning = m.reasoning;
        } else if (content.contains(THINK_CLOSE)) {
            String whole = content;
            // content.split('</think>')[-1].lstrip('\n')
            content = lstripNewlines(whole.substring(whole.lastIndexOf(THINK_CLOSE) + THINK_CLOSE.length()));
            // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
            String before = rstripNewlines(whole.substring(0, whole.indexOf(THINK_CLOSE)));
            int open = before.lastIndexOf(THINK_OPEN);
            reasoning = lstripNewlines(open < 0 ? before : before.substring(open + THINK_OPEN.length()));
        }
        out.append(IM_START).append("assistant\n");
        if (index > lastQueryIndex && (last || !reasoning.isEmpty())) {
            out.append("<think>\n").append(rstripNewlines(lstripNewlines(reasoning))).append("\n</think>\n\n")
                    .append(lstripNewlines(content));
        } else {
            out.append(content);
        }
        if (m.hasToolCalls) {
            throw new UnsupportedChatException("assistant tool_calls at message " + index + " are not rendered natively");
        }
        out.append(IM_END).append('\n');
    }

    /** The template's reverse scan for {@code ns.last_query_index}; defaults to the last index. */
    private static int lastQueryIndex(List<Message> msgs) {
        for (int i = msgs.size() - 1; i >= 0; i--) {
            Message m = msgs.get(i);
            if (m.role.equals("user")) {
                String c = m.requireContent(i);
                if (!(c.startsWith("<tool_response>") && c.endsWith("</tool_response>"))) {
                    return i;
                }
            }
        }
        return msgs.size() - 1;
    }

    private static List<Message> parse(JsonNode messages) {
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw new UnsupportedChatException("messages must be a non-empty array");
        }
        List<Message> out = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            if (!m.isObject() || !m.path("role").isTextual()) {
                throw new UnsupportedChatException("message " + i + " has no string role");
            }
            JsonNode content = m.get("content");
            JsonNode reasoning = m.get("reasoning_content");
            if (reasoning != null && !reasoning.isNull() && !reasoning.isTextual()) {
                throw new UnsupportedChatException("message " + i + " has non-string reasoning_content");
            }
            JsonNode toolCalls = m.get("tool_calls");
            boolean hasToolCalls = toolCalls != null && !toolCalls.isNull() && !(toolCalls.isContainerNode() && toolCalls.isEmpty());
            out.add(new Message(m.get("role").asText(),
                    content != null && content.isTextual() ? content.asText() : null,
                    reasoning != null && reasoning.isTextual() ? reasoning.asText() : null,
                    hasToolCalls));
        }
        return out;
    }

    private static int estimateLength(List<Message> msgs) {
        long chars = 64;
        for (Message m : msgs) {
            chars += 32 + (m.content == null ? 0 : m.content.length());
        }
        return (int) Math.min(chars, Integer.MAX_VALUE - 16);
    }

    static String lstripNewlines(String s) {
        int start = 0;
        while (start < s.length() && s.charAt(start) == '\n') {
            start++;
        }
        return s.substring(start);
    }

    static String rstripNewlines(String s) {
        int end = s.length();
        while (end > 0 && s.charAt(end - 1) == '\n') {
            end--;
        }
        return s.substring(0, end);
    }

    /** One message; {@code content} is null when absent or not a string. */
    private record Message(String role, String content, String reasoning, boolean hasToolCalls) {
        String requireContent(int index) {
            if (content == null) {
                throw new UnsupportedChatException("message " + index + " (" + role + ") has no string content");
            }
            return content;
        }
    }
}
