package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.kvroute.router.worker.EngineType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tokenizers by model id, loaded once from local directories ({@code tokenizer.json} plus
 * {@code tokenizer_config.json}, optionally {@code chat_template.jinja}) and reused for every request.
 *
 * <p>Invariants: never touches the network (DJL's offline mode is set while tokenizers load, and
 * only then, see {@link DjlOffline}); tokenizers never truncate, pad or add special tokens; several models sharing one
 * directory share one native tokenizer. A model with no entry still routes, with its input length
 * estimated by {@link RequestTokens#estimateTokens}.
 *
 * <p>Concurrency: the map is immutable after {@link #load}, so {@link #forModel} and the returned
 * tokenizers are safe from any thread without locking. {@link #close} frees the native tokenizers and
 * must only be called once no request uses them any more.
 */
public final class TokenizerRegistry implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TokenizerRegistry.class);

    private final Map<String, ModelTokenizer> byModel;
    private final List<DjlModelTokenizer> owned;

    private final Map<String, String> chatCacheDeclines;

    private final SegmentParallelism parallelism;

    /** The engine whose preprocessing the encoders follow (chat rendering, completion special tokens). */
    private final EngineType engine;

    private TokenizerRegistry(Map<String, ModelTokenizer> byModel, List<DjlModelTokenizer> owned) {
        this(byModel, owned, Map.of(), SegmentParallelism.NONE, EngineType.SGLANG);
    }

    private TokenizerRegistry(Map<String, ModelTokenizer> byModel, List<DjlModelTokenizer> owned,
            Map<String, String> chatCacheDeclines, SegmentParallelism parallelism, EngineType engine) {
        this.engine = requireNonNull(engine, "engine");
        this.byModel = Map.copyOf(byModel);
        this.owned = List.copyOf(owned);
        this.chatCacheDeclines = Map.copyOf(chatCacheDeclines);
        this.parallelism = parallelism;
    }

    /**
     * Models that asked for a chat prefix cache but run without one, with the reason: {@code text_only},
     * {@code no_prefix_property}, {@code no_added_token_marker} (see {@link TurnMarkers}).
     */
    public Map<String, String> chatCacheDeclines() {
        return new java.util.TreeMap<>(chatCacheDeclines);
    }

    /**
     * Loads one tokenizer per distinct directory (about 1 s for the 11 MB Qwen3 tokenizer.json).
     *
     * @throws IOException naming the model and directory when a tokenizer cannot be loaded; the
     *                     tokenizers loaded so far are closed
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel) throws IOException {
        return load(tokenizerDirsByModel, 0);
    }

    /**
     * As {@link #load(Map)}, with a {@link ChatPrefixCache} of {@code chatCacheBytesPerModel} bytes per
     * model in front of each chat encoder whose template marks turns with {@code <|im_start|>} (0 = no cache).
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel, long chatCacheBytesPerModel)
            throws IOException {
        return load(tokenizerDirsByModel, chatCacheBytesPerModel, EngineType.SGLANG);
    }

    /**
     * As {@link #load(Map, long)}, rendering chats as {@code engine} preprocesses them before the template
     * (null = SGLang, the engine that accepts forwarded {@code input_ids} on chat).
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel, long chatCacheBytesPerModel,
            EngineType engine) throws IOException {
        return load(tokenizerDirsByModel, chatCacheBytesPerModel, engine, SegmentParallelism.NONE);
    }

    /**
     * As {@link #load(Map, long, EngineType)}, tokenizing each chat prompt's uncached segments on up to
     * {@code parallelism.threads()} threads (see {@link SegmentParallelEncoder}). The registry owns
     * {@code parallelism} from here on and closes it with itself (also when loading fails).
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel, long chatCacheBytesPerModel,
            EngineType engine, SegmentParallelism parallelism) throws IOException {
        return load(tokenizerDirsByModel, chatCacheBytesPerModel, engine, parallelism, InstantSource.system());
    }

    /**
     * As {@link #load(Map, long, EngineType, SegmentParallelism)}, with the wall clock whose instant the chat
     * templates' {@code strftime_now} formats (the router's; a test's fixed clock pins the date).
     */
    public static TokenizerRegistry load(Map<String, Path> tokenizerDirsByModel, long chatCacheBytesPerModel,
            EngineType engine, SegmentParallelism parallelism, InstantSource wallClock) throws IOException {
        requireNonNull(parallelism, "parallelism");
        requireNonNull(wallClock, "wallClock");
        try {
            return DjlOffline.during(() -> loadConfigured(tokenizerDirsByModel, chatCacheBytesPerModel, engine, parallelism,
                    wallClock));
        } catch (IOException | RuntimeException e) {
            parallelism.close();
            throw e;
        }
    }

    private static TokenizerRegistry loadConfigured(Map<String, Path> tokenizerDirsByModel, long chatCacheBytesPerModel,
            EngineType engine, SegmentParallelism parallelism, InstantSource wallClock) throws IOException {
        EngineType target = engine == null ? EngineType.SGLANG : engine;
        requireNonNull(tokenizerDirsByModel, "tokenizerDirsByModel");
        Map<Path, DjlModelTokenizer> byDir = new HashMap<>();
        Map<String, ModelTokenizer> byModel = new HashMap<>();
        Map<String, String> cacheDeclines = new HashMap<>();
        List<DjlModelTokenizer> owned = new ArrayList<>();
        try {
            for (Map.Entry<String, Path> e : tokenizerDirsByModel.entrySet()) {
                String model = requireNonNull(e.getKey(), "model id");
                Path dir = requireNonNull(e.getValue(), "tokenizer dir of " + model).toAbsolutePath().normalize();
                DjlModelTokenizer tok = byDir.get(dir);
                if (tok == null) {
                    tok = acquire(model, dir, target, wallClock);
                    byDir.put(dir, tok);
                    owned.add(tok);
                }
                ModelTokenizer wrapped = PrefixCachedTokenizer.wrap(tok, chatCacheBytesPerModel, parallelism);
                byModel.put(model, wrapped);
                if (chatCacheBytesPerModel > 0 && !(wrapped instanceof PrefixCachedTokenizer)) {
                    cacheDeclines.put(model, tok.turnMarkers().found() ? "marker" : tok.turnMarkers().declineReason());
                }
            }
        } catch (IOException | RuntimeException ex) {
            owned.forEach(TokenizerRegistry::release);
            throw ex;
        }
        return new TokenizerRegistry(byModel, owned, cacheDeclines, parallelism, target);
    }

    /**
     * Tokenizers loaded in this process, shared by every registry that names the same directory
     * (unchanged since it was loaded): an in-process fleet of a router and N mock workers loads the
     * 11 MB Qwen3 tokenizer once instead of N + 1 times (about 1-3 s of CPU each on this machine).
     * Reference-counted; the native tokenizer is freed when the last registry using it closes.
     */
    private static final Map<SharedKey, DjlModelTokenizer> SHARED = new HashMap<>(); // guarded by SHARED
    private static final Map<DjlModelTokenizer, Integer> REFS = new java.util.IdentityHashMap<>(); // guarded by SHARED

    /**
     * What makes two loads the same tokenizer: the directory as it is on disk, the engine whose preprocessing
     * its chat encoder reproduces, and the wall clock its templates read (registries on different clocks, e.g.
     * a test's fixed one, never share an encoder).
     */
    private record SharedKey(Path dir, EngineType engine, String fileStamp, InstantSource wallClock) {}

    private static DjlModelTokenizer acquire(String model, Path dir, EngineType engine, InstantSource wallClock)
            throws IOException {
        Path json = dir.resolve("tokenizer.json");
        SharedKey key = new SharedKey(dir, engine,
                Files.isRegularFile(json) ? Files.size(json) + "|" + Files.getLastModifiedTime(json) : "missing", wallClock);
        synchronized (SHARED) {
            DjlModelTokenizer cached = SHARED.get(key);
            if (cached != null) {
                REFS.merge(cached, 1, Integer::sum);
                return cached;
            }
        }
        DjlModelTokenizer loaded = loadDir(model, dir, engine, wallClock); // slow: never under the lock
        synchronized (SHARED) {
            DjlModelTokenizer raced = SHARED.get(key);
            if (raced != null) {
                REFS.merge(raced, 1, Integer::sum);
                loaded.close();
                return raced;
            }
            SHARED.put(key, loaded);
            REFS.put(loaded, 1);
            return loaded;
        }
    }

    private static void release(DjlModelTokenizer tokenizer) {
        boolean last;
        synchronized (SHARED) {
            int refs = REFS.getOrDefault(tokenizer, 1) - 1;
            last = refs <= 0;
            if (last) {
                REFS.remove(tokenizer);
                SHARED.values().removeIf(t -> t == tokenizer);
            } else {
                REFS.put(tokenizer, refs);
            }
        }
        if (last) {
            tokenizer.close();
        }
    }

    /**
     * A registry over tokenizers the caller brings (an embedder's own {@link ModelTokenizer}, or a test's);
     * the caller keeps ownership: {@link #close} does not close them.
     */
    public static TokenizerRegistry of(Map<String, ModelTokenizer> byModel) {
        return new TokenizerRegistry(byModel, List.of());
    }

    /** A registry with no tokenizers: every model routes on estimated lengths. */
    public static TokenizerRegistry empty() {
        return new TokenizerRegistry(Map.of(), List.of());
    }

    /** The models whose chat template is not rendered, with the reason label (see {@link ModelTokenizer#textOnlyReason}). */
    public Map<String, String> textOnlyModels() {
        Map<String, String> out = new java.util.TreeMap<>();
        byModel.forEach((model, tok) -> tok.textOnlyReason().ifPresent(r -> out.put(model, r)));
        return out;
    }

    /** The chat prefix caches by model id (models without a chat encoder, or whose marker is not one token, have none). */
    public Map<String, ChatPrefixCache> chatPrefixCaches() {
        Map<String, ChatPrefixCache> out = new java.util.TreeMap<>();
        byModel.forEach((model, tok) -> {
            if (tok instanceof PrefixCachedTokenizer cached) {
                out.put(model, cached.cache());
            }
        });
        return out;
    }

    /**
     * The engine whose preprocessing these tokenizers follow (SGLang unless loaded for another): for chats the
     * template's input, for completion prompts whether a client's {@code add_special_tokens} is honoured
     * ({@link RequestTokens#addsSpecialTokens}).
     */
    public EngineType engine() {
        return engine;
    }

    public Optional<ModelTokenizer> forModel(String modelId) {
        return modelId == null ? Optional.empty() : Optional.ofNullable(byModel.get(modelId));
    }

    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    /** Releases this registry's tokenizers (idempotent). */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            owned.forEach(TokenizerRegistry::release);
            parallelism.close();
        }
    }

    private static DjlModelTokenizer loadDir(String model, Path dir, EngineType engine, InstantSource wallClock)
            throws IOException {
        Path tokenizerJson = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(tokenizerJson)) {
            throw new IOException("model " + model + ": no tokenizer.json in " + dir);
        }
        ModelChatConfig chat = ModelChatConfig.read(model, dir);
        HuggingFaceTokenizer hf;
        try {
            hf = HuggingFaceTokenizer.builder()
                    .optTokenizerPath(dir)
                    .optAddSpecialTokens(false)
                    .optTruncation(false)
                    .optPadding(false)
                    .optWithOverflowingTokens(false)
                    .build();
        } catch (IOException | RuntimeException ex) {
            throw new IOException("model " + model + ": cannot load tokenizer from " + dir + ": " + ex.getMessage(), ex);
        }
        DjlModelTokenizer tokenizer = new DjlModelTokenizer(hf, chat, engine, TurnMarkers.splittingAddedTokens(tokenizerJson),
                wallClock);
        tokenizer.textOnlyReason().ifPresent(reason -> LOG.warn(
                "model {}: chat template in {} is not rendered ({}: {}); chats on this model are text-only: routed on"
                        + " their message texts, never forwarded as input_ids, not looked up in the exact KV index",
                model, dir, reason, tokenizer.textOnlyMessage()));
        return tokenizer;
    }

}
