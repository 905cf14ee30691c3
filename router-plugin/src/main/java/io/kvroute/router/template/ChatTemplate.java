package io.kvroute.router.template;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.template.Node.Stmt;
import io.kvroute.router.template.TemplateFailure.Kind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Hugging Face chat template compiled once and rendered with the semantics of transformers'
 * {@code apply_chat_template} (jinja2 {@code ImmutableSandboxedEnvironment} with {@code trim_blocks},
 * {@code lstrip_blocks}, {@code loopcontrols}, transformers' {@code tojson}, {@code raise_exception} and
 * {@code strftime_now}; see {@code transformers src/transformers/utils/chat_template_utils.py}).
 *
 * <p>Why a hand-written interpreter: no Java library renders these templates as jinja2 does. Jinjava
 * lacks Python's string methods, cannot parse {@code [::-1]}, prints {@code true} for {@code True},
 * has a compact {@code tojson} and returns partial output on errors; any of those changes the prompt
 * and with it every token id. llama.cpp (minja), transformers.js ({@code @huggingface/jinja}) and
 * sgl-model-gateway (minijinja) made the same choice in their languages.
 *
 * <p>Fail closed: {@link #compile} returns {@link Unsupported} for any tag, filter, test, method or
 * global outside the implemented subset; {@link #render} returns {@link Declined} wherever jinja2 would
 * raise, or where this renderer cannot prove its output equal to Python's (printing a method object,
 * a 65-bit int). A {@link Rendered} text is meant to be byte-identical to transformers'.
 *
 * <p>{@code strftime_now} formats the {@code now} passed to {@link #render} in UTC. transformers uses
 * the engine process's local time zone, so engines must run in UTC for date-stamping templates to match.
 *
 * <p>Thread-safe and immutable: the tree is shared; each render has its own evaluator state.
 */
public final class ChatTemplate {

    /** Upper bound on one rendered prompt (and on any string a template builds), in chars. */
    public static final int MAX_OUTPUT_CHARS = 64 << 20;

    /** The result of compiling. */
    public sealed interface CompileResult permits Compiled, Unsupported {}

    public record Compiled(ChatTemplate template) implements CompileResult {}

    /** The template uses something this renderer does not implement, or is not valid jinja2. */
    public record Unsupported(Kind reason, String message) implements CompileResult {}

    /** The result of one render. */
    public sealed interface RenderResult permits Rendered, Declined {}

    public record Rendered(String text) implements RenderResult {}

    /** jinja2 would have raised (or the output could not be proven equal); never forward ids for it. */
    public record Declined(Kind reason, String message) implements RenderResult {}

    private final List<Stmt> body;
    private final String source;

    private ChatTemplate(String source, List<Stmt> body) {
        this.source = source;
        this.body = body;
    }

    public static CompileResult compile(String source) {
        requireNonNull(source, "source");
        try {
            return new Compiled(new ChatTemplate(source, Parser.parse(source)));
        } catch (TemplateFailure f) {
            return new Unsupported(f.kind(), f.getMessage());
        } catch (RuntimeException e) {
            return new Unsupported(Kind.SYNTAX, "parser failure: " + e);
        }
    }

    public String source() {
        return source;
    }

    /**
     * @param variables template variables as plain Java values (String, Boolean, Number, List, Map,
     *     null); see {@link #variables} for the set transformers passes
     * @param now the instant {@code strftime_now} formats (UTC)
     */
    public RenderResult render(Map<String, ?> variables, Instant now) {
        requireNonNull(variables, "variables");
        requireNonNull(now, "now");
        try {
            Map<String, Object> context = new LinkedHashMap<>();
            for (Map.Entry<String, ?> e : variables.entrySet()) {
                context.put(e.getKey(), value(e.getValue()));
            }
            return new Rendered(new Evaluator(context, now, MAX_OUTPUT_CHARS).render(body));
        } catch (TemplateFailure f) {
            return new Declined(f.kind(), f.getMessage());
        } catch (StackOverflowError e) {
            return new Declined(Kind.LIMIT, "recursion too deep");
        } catch (RuntimeException e) {
            return new Declined(Kind.INTERNAL, e.toString());
        }
    }

    /**
     * The variables transformers' {@code apply_chat_template} passes to the template: {@code messages},
     * {@code tools} and {@code documents} (None when absent: defined, and {@code none}),
     * {@code add_generation_prompt}, the tokenizer's non-None named special tokens, then caller kwargs
     * such as {@code enable_thinking}, which override special tokens of the same name.
     */
    public static Map<String, Object> variables(List<?> messages, List<?> toolsOrNull, boolean addGenerationPrompt,
            Map<String, String> specialTokens, Map<String, ?> templateKwargs) {
        Map<String, Object> vars = new LinkedHashMap<>(specialTokens);
        vars.putAll(templateKwargs);
        vars.put("messages", messages);
        vars.put("tools", toolsOrNull);
        vars.put("documents", null);
        vars.put("add_generation_prompt", addGenerationPrompt);
        return vars;
    }

    /** Converts a plain Java (or Jackson-parsed) value into the renderer's immutable Python values. */
    static Object value(Object v) throws TemplateFailure {
        if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Double) {
            return v;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        if (v instanceof BigInteger b) {
            if (b.bitLength() > 63) {
                throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "integer beyond 64 bits");
            }
            return b.longValue();
        }
        if (v instanceof BigDecimal d) {
            return d.doubleValue();
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object o : list) {
                out.add(value(o));
            }
            return Collections.unmodifiableList(out);
        }
        if (v instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.put(value(e.getKey()), value(e.getValue()));
            }
            return Collections.unmodifiableMap(out);
        }
        throw new TemplateFailure(Kind.UNSUPPORTED_VALUE, "value of type " + v.getClass().getName());
    }
}
