package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import io.kvroute.router.worker.EngineType;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * A DJL HuggingFace tokenizer with truncation, padding and implicit special tokens switched off; special
 * tokens are added only where asked for ({@link #encodeWithSpecialTokens}, completion prompts).
 *
 * <p>Ids-only fast path: {@code HuggingFaceTokenizer.encode} builds a full {@code Encoding} (token
 * strings, offsets, masks: 8 JNI copies, one String and one CharSpan object per token) when the
 * router needs only the ids. {@link #encode} asks the native encoding for its ids alone and frees it
 * (see {@code TokenizeBenchmark.djlFullEncoding} for the measured difference). That path skips DJL's
 * Java-side text preparation (add_prefix_space, do_lower_case, strip_accents from the config), so it is
 * enabled only when a probe shows both paths agree for this tokenizer; otherwise the public API is used.
 *
 * <p>Thread-safe: the native HF tokenizer is immutable after construction and encodes through a shared
 * handle, exactly as DJL's own {@code encode} does (checked by {@code TokenizerRegistryTest} with 8
 * concurrent threads).
 */
final class DjlModelTokenizer implements ModelTokenizer, AutoCloseable {

    /** Texts on which DJL's Java-side preparation (prefix space, lower-casing, accent stripping) would show. */
    private static final List<String> PREPARATION_PROBES = List.of("Hello", "HELLO World", "Éléphant àçcént", " x");

    private final HuggingFaceTokenizer tokenizer;
    private final boolean idsOnlyPath;
    private final Optional<ChatEncoder> chatEncoder;
    private final Optional<String> textOnlyReason;
    private final String textOnlyMessage;
    private final TurnMarkers.Result turnMarkers;
    private final Optional<String> idsUntrustedReason;

    DjlModelTokenizer(HuggingFaceTokenizer tokenizer, ModelChatConfig chat, EngineType engine) {
        this(tokenizer, chat, engine, java.util.Set.of(), InstantSource.system());
    }

    /**
     * @param splittingAddedTokens the tokenizer's added tokens that split raw text (see {@link TurnMarkers})
     * @param wallClock the date {@code strftime_now} formats (the router's wall clock)
     */
    DjlModelTokenizer(HuggingFaceTokenizer tokenizer, ModelChatConfig chat, EngineType engine,
            java.util.Set<String> splittingAddedTokens, InstantSource wallClock) {
        this.tokenizer = requireNonNull(tokenizer, "tokenizer");
        this.idsUntrustedReason = Optional.ofNullable(chat.idsUntrustedReason());
        this.idsOnlyPath = PREPARATION_PROBES.stream()
                .allMatch(p -> java.util.Arrays.equals(idsOnly(p), viaEncoding(p)));
        TemplateChatEncoder.Loaded loaded = TemplateChatEncoder.compile(chat, engine, this::encode, requireNonNull(wallClock, "wallClock"));
        if (loaded instanceof TemplateChatEncoder.Ready ready) {
            this.chatEncoder = Optional.of(ready.encoder());
            this.textOnlyReason = Optional.empty();
            this.textOnlyMessage = "";
            TemplateChatEncoder.Loaded plain = TemplateChatEncoder.compile(chat, null, this::encode, wallClock);
            this.turnMarkers = chat.idsUntrustedReason() != null
                    ? new TurnMarkers.Result(null, null, chat.idsUntrustedReason()) // never engine-equivalent: nothing to cache
                    : TurnMarkers.find(((TemplateChatEncoder.Ready) plain).encoder(), splittingAddedTokens, this::encode);
        } else {
            TemplateChatEncoder.TextOnly textOnly = (TemplateChatEncoder.TextOnly) loaded;
            this.chatEncoder = Optional.empty();
            this.textOnlyReason = Optional.of(textOnly.reason());
            this.textOnlyMessage = textOnly.message();
            this.turnMarkers = new TurnMarkers.Result(null, null, "text_only");
        }
    }

    /** Where the template starts messages, for the chat prefix cache, or why no cut is safe. */
    TurnMarkers.Result turnMarkers() {
        return turnMarkers;
    }

    /** Why the chat template did not compile, for the load-time log line. */
    String textOnlyMessage() {
        return textOnlyMessage;
    }

    @Override
    public Optional<String> idsUntrustedReason() {
        return idsUntrustedReason;
    }

    @Override
    public Optional<String> textOnlyReason() {
        return textOnlyReason;
    }

    @Override
    public int[] encode(String text) {
        requireNonNull(text, "text");
        return idsOnlyPath ? idsOnly(text) : viaEncoding(text);
    }

    /** As the engine tokenizes a completion prompt: the tokenizer.json post-processor's special tokens added. */
    @Override
    public int[] encodeWithSpecialTokens(String text) {
        requireNonNull(text, "text");
        return idsOnlyPath ? idsOnly(text, true) : viaEncoding(text, true);
    }

    boolean usesIdsOnlyPath() {
        return idsOnlyPath;
    }

    int[] viaEncoding(String text) {
        return viaEncoding(text, false);
    }

    int[] viaEncoding(String text, boolean addSpecialTokens) {
        return toInts(tokenizer.encode(text, addSpecialTokens, false).getIds());
    }

    int[] idsOnly(String text) {
        return idsOnly(text, false);
    }

    int[] idsOnly(String text, boolean addSpecialTokens) {
        long encoding = TokenizersLibrary.LIB.encode(tokenizer.getHandle(), text, addSpecialTokens);
        try {
            return toInts(TokenizersLibrary.LIB.getTokenIds(encoding));
        } finally {
            TokenizersLibrary.LIB.deleteEncoding(encoding);
        }
    }

    private static int[] toInts(long[] ids) {
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    @Override
    public Optional<ChatEncoder> chatEncoder() {
        return chatEncoder;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
