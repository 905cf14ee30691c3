package io.kvroute.router.tokenize;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.EngineType;
import java.util.Optional;
import java.util.function.Function;

/**
 * One model's tokenizer whose chat encoder reuses the ids of chat prefixes it has seen before, through
 * its own {@link ChatPrefixCache} (one per model, bounded in bytes). Raw-text encoding is untouched.
 * The chat encoder renders exactly as the wrapped one does, then encodes through the cache, so its ids
 * equal the wrapped encoder's for every input (see {@link ChatPrefixCache} for why). What the cache
 * misses is tokenized in one call, or in parts on several threads ({@link SegmentParallelEncoder}).
 *
 * <p>Thread-safe when the wrapped tokenizer is.
 */
public final class PrefixCachedTokenizer extends ChatEncoderOverride {

    private final ChatPrefixCache cache;
    private final Optional<ChatEncoder> chatEncoder;
    private final String[] markers;

    /**
     * @return {@code tokenizer} itself when it has no chat encoder (nothing to cache) or the marker is not
     *     one token, else the cached view
     */
    public static ModelTokenizer wrap(ModelTokenizer tokenizer, long cacheBytes) {
        return wrap(tokenizer, cacheBytes, SegmentParallelism.NONE);
    }

    /**
     * As {@link #wrap(ModelTokenizer, long)}; with {@code parallelism} above one thread, the chat prompt's
     * uncached segments are tokenized in parts at once ({@link SegmentParallelEncoder}), also when the
     * cache is off ({@code cacheBytes == 0}). Needs the turn markers of a {@link DjlModelTokenizer}.
     */
    public static ModelTokenizer wrap(ModelTokenizer tokenizer, long cacheBytes, SegmentParallelism parallelism) {
        requireNonNull(tokenizer, "tokenizer");
        requireNonNull(parallelism, "parallelism");
        if (tokenizer.chatEncoder().isEmpty()) {
            return tokenizer;
        }
        if (tokenizer instanceof DjlModelTokenizer djl) {
            TurnMarkers.Result markers = djl.turnMarkers();
            if (!markers.found()) {
                return tokenizer;
            }
            Function<String, int[]> segments = segmentEncoder(tokenizer, markers.markers(), parallelism);
            if (cacheBytes <= 0) {
                return segments == null ? tokenizer : new SegmentParallelTokenizer(tokenizer, segments);
            }
            return new PrefixCachedTokenizer(tokenizer, new ChatPrefixCache(cacheBytes), markers.markers(), markers.ids(),
                    segments == null ? tokenizer::encode : segments);
        }
        if (cacheBytes <= 0) {
            return tokenizer;
        }
        int[] marker = tokenizer.encode(ChatPrefixCache.MARKER);
        if (marker.length != 1) {
            return tokenizer; // the marker is not one special token: the cut would not be exact
        }
        return new PrefixCachedTokenizer(tokenizer, new ChatPrefixCache(cacheBytes), new String[] {ChatPrefixCache.MARKER},
                new int[] {marker[0]}, tokenizer::encode);
    }

    /** The parallel segment encoder, or null when {@code parallelism} is one thread or the probe finds cuts unsafe. */
    private static Function<String, int[]> segmentEncoder(ModelTokenizer tokenizer, String[] markers,
            SegmentParallelism parallelism) {
        if (parallelism.threads() < 2 || !SegmentParallelEncoder.probe(markers, tokenizer::encode)) {
            return null;
        }
        return new SegmentParallelEncoder(markers, tokenizer::encode, parallelism.executor(), parallelism.threads(),
                parallelism.minPartChars());
    }

    private PrefixCachedTokenizer(ModelTokenizer tokenizer, ChatPrefixCache cache, String[] markers, int[] markerIds,
            Function<String, int[]> segmentEncoder) {
        super(tokenizer);
        this.cache = cache;
        this.markers = markers.clone();
        ChatEncoder base = tokenizer.chatEncoder().orElseThrow();
        this.chatEncoder = Optional.of(new ChatEncoder() {
            @Override
            public String render(ChatInput chat) {
                return base.render(chat);
            }

            @Override
            public int[] encode(ChatInput chat) {
                return cache.encode(base.render(chat), markers, markerIds, segmentEncoder);
            }

            @Override
            public Optional<String> renderFor(EngineType engine, ChatInput chat) {
                return base.renderFor(engine, chat);
            }

            @Override
            public Optional<int[]> encodeFor(EngineType engine, ChatInput chat) {
                return base.renderFor(engine, chat).map(text -> cache.encode(text, markers, markerIds, segmentEncoder));
            }
        });
    }

    /** The turn markers the cache cuts at. */
    public java.util.List<String> markers() {
        return java.util.List.of(markers);
    }

    @Override
    public Optional<ChatEncoder> chatEncoder() {
        return chatEncoder;
    }

    /** The uncached tokenizer behind this one. */
    public ModelTokenizer delegate() {
        return tokenizer;
    }

    /** The cache, for metrics. */
    public ChatPrefixCache cache() {
        return cache;
    }
}
