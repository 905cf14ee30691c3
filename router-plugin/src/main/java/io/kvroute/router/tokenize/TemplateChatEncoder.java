package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.template.ChatTemplate;
import io.kvroute.router.template.ChatTemplate.Compiled;
import io.kvroute.router.template.ChatTemplate.CompileResult;
import io.kvroute.router.template.ChatTemplate.Declined;
import io.kvroute.router.template.ChatTemplate.RenderResult;
import io.kvroute.router.template.ChatTemplate.Rendered;
import io.kvroute.router.template.ChatTemplate.Unsupported;
import io.kvroute.router.worker.EngineType;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A model's chat encoder: its own Hugging Face chat template, compiled once by
 * {@link io.kvroute.router.template.ChatTemplate}, rendered with the variables transformers'
 * {@code apply_chat_template} passes (messages, tools, documents, add_generation_prompt, the model's
 * special tokens, then the request's template kwargs), after the target engine's message preprocessing
 * ({@link EnginePreprocessing}), then tokenized with no special tokens added, as transformers does.
 *
 * <p>Fail closed: {@link #compile} returns the compile failure when the template uses anything the
 * renderer does not implement, and the model is then text-only (no engine-equivalent ids, so nothing
 * is forwarded and the exact KV index is not asked). A render that jinja2 would fail, or that the
 * renderer cannot prove equal to Python's, throws {@link UnsupportedChatException} labelled
 * {@code template_<kind>}.
 *
 * <p>Immutable and thread-safe when the text encoder is; the clock only feeds {@code strftime_now}.
 */
final class TemplateChatEncoder implements ChatEncoder {

    /** A compiled encoder, or why the model is text-only. */
    sealed interface Loaded permits Ready, TextOnly {}

    record Ready(TemplateChatEncoder encoder) implements Loaded {}

    /** @param reason a metric label ({@code unsupported_filter}, ...); message for the log */
    record TextOnly(String reason, String message) implements Loaded {}

    private final ChatTemplate template;
    private final ModelChatConfig config;
    private final EnginePreprocessing preprocessing;
    /** The preprocessing of the engines whose kind is not {@link #preprocessing}'s, or null without an engine. */
    private final EnginePreprocessing otherKind;
    private final Function<String, int[]> textEncoder;
    private final InstantSource clock;

    private TemplateChatEncoder(ChatTemplate template, ModelChatConfig config, EngineType engine,
            Function<String, int[]> textEncoder, InstantSource clock) {
        this.template = template;
        this.config = config;
        this.preprocessing = new EnginePreprocessing(engine, template.source());
        this.otherKind = engine == null ? null : new EnginePreprocessing(
                EnginePreprocessing.kindOf(engine) == EngineType.VLLM ? EngineType.SGLANG : EngineType.VLLM,
                template.source());
        this.textEncoder = textEncoder;
        this.clock = clock;
    }

    /** @param engine whose preprocessing to reproduce; null for none (transformers' {@code apply_chat_template} alone) */
    static Loaded compile(ModelChatConfig config, EngineType engine, Function<String, int[]> textEncoder,
            InstantSource clock) {
        requireNonNull(config, "config");
        requireNonNull(textEncoder, "textEncoder");
        requireNonNull(clock, "clock");
        if (config.templateOrNull() == null) {
            return new TextOnly("no_template", "no chat_template in tokenizer_config.json and no chat_template.jinja");
        }
        CompileResult result = ChatTemplate.compile(config.templateOrNull());
        if (result instanceof Unsupported u) {
            return new TextOnly(u.reason().label(), u.message());
        }
        return new Ready(new TemplateChatEncoder(((Compiled) result).template(), config, engine, textEncoder, clock));
    }

    EngineType engine() {
        return preprocessing.engine();
    }

    @Override
    public String render(ChatInput chat) {
        requireNonNull(chat, "chat");
        checkRenderable(chat);
        return render(chat, preprocessing.prepare(chat, chat.continueFinalMessage()));
    }

    /**
     * Only the other kind's preprocessing can differ from this encoder's ({@link EnginePreprocessing#kindOf}),
     * and it is applied only when it changes the template's inputs for this chat (the usual single-turn chat,
     * a user message last and the generation prompt asked, prepares equally for both): comparing the prepared
     * inputs costs a copy of the messages, rendering and tokenizing again costs the prompt.
     */
    @Override
    public Optional<String> renderFor(EngineType engine, ChatInput chat) {
        requireNonNull(engine, "engine");
        requireNonNull(chat, "chat");
        if (otherKind == null || EnginePreprocessing.kindOf(engine) == EnginePreprocessing.kindOf(preprocessing.engine())) {
            return Optional.empty();
        }
        checkRenderable(chat);
        EnginePreprocessing.Prepared theirs = otherKind.prepare(chat, chat.continueFinalMessage());
        EnginePreprocessing.Prepared mine;
        try {
            mine = preprocessing.prepare(chat, chat.continueFinalMessage());
        } catch (UnsupportedChatException e) {
            mine = null; // this encoder's engine declines the chat; the other's renders it
        }
        return theirs.equals(mine) ? Optional.empty() : Optional.of(render(chat, theirs));
    }

    @Override
    public Optional<int[]> encodeFor(EngineType engine, ChatInput chat) {
        return renderFor(engine, chat).map(textEncoder);
    }

    private void checkRenderable(ChatInput chat) {
        if (chat.tools() != null && config.hasToolUseTemplate()) {
            throw new UnsupportedChatException("tool_use_template", "the model names a separate tool_use template");
        }
        if (preprocessing.engine() != null && config.idsUntrustedReason() != null) {
            throw new UnsupportedChatException(config.idsUntrustedReason(),
                    "the engine's transformers rebuilds this tokenizer: its ids differ from tokenizer.json's");
        }
    }

    private String render(ChatInput chat, EnginePreprocessing.Prepared prepared) {
        Map<String, Object> vars = ChatTemplate.variables(prepared.messages(), prepared.tools(), prepared.addGenerationPrompt(),
                config.specialTokens(), chat.kwargs());
        RenderResult result = template.render(vars, clock.instant());
        if (result instanceof Declined d) {
            throw new UnsupportedChatException("template_" + d.reason().label(), d.message());
        }
        return ((Rendered) result).text();
    }

    @Override
    public int[] encode(ChatInput chat) {
        return textEncoder.apply(render(chat));
    }
}
