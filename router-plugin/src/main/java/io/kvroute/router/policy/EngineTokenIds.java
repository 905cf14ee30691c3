package io.kvroute.router.policy;

import static java.util.Objects.requireNonNull;

import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * A chat request's token ids as each engine computes them, for the exact KV index. Engines preprocess a
 * chat's messages differently before the chat template (SGLang turns a trailing assistant turn into a user
 * turn and always adds the generation prompt, vLLM keeps both as sent and joins list content that SGLang's
 * path is not reproduced for), and a worker's cached blocks are keyed by its own engine's ids: in a mixed
 * fleet each worker must be looked up with the ids of its engine.
 *
 * <p>The {@link #primary} ids (the request's {@link RoutingRequest#tokenIds}: the prefix tree's key, and what
 * is forwarded as {@code input_ids}) hold for every engine whose preprocessing hands the template the same
 * inputs, which is the usual case; another engine's ids are computed by {@code otherEngine} on first use
 * only, so a fleet of one engine kind, or a request whose candidates the exact index never asks, costs
 * nothing extra.
 *
 * <p>Thread-safe: each engine's answer is computed at most once per racing thread (a pure function of the
 * request) and published through an atomic array; any thread may read.
 */
public final class EngineTokenIds {

    /** Stands for "computed: this engine's ids are not known" in {@link #byEngine}. */
    private static final int[] UNKNOWN = new int[0];

    private final int[] primary;
    /** The primary ids are an engine's (not routing-only): workers whose engine is not known yet get them. */
    private final boolean primaryIsEngines;
    private final Function<EngineType, int[]> otherEngine;
    /** Per {@link EngineType#ordinal}: null until computed, then the ids or {@link #UNKNOWN}. */
    private final AtomicReferenceArray<int[]> byEngine = new AtomicReferenceArray<>(EngineType.values().length);

    /**
     * @param primary the request's ids, for workers whose engine is not known yet and for every engine
     *     {@code otherEngine} answers with this same array
     * @param otherEngine the ids an engine computes: {@code primary} itself when its preprocessing changes
     *     nothing, other ids, or null when they are not known (its preprocessing of this chat is not
     *     reproduced): its workers then get no exact answer
     */
    public EngineTokenIds(int[] primary, Function<EngineType, int[]> otherEngine) {
        this(primary, true, otherEngine);
    }

    /** @param primaryIsEngines false when {@code primary} are routing-only ids: workers not typed yet get none */
    public EngineTokenIds(int[] primary, boolean primaryIsEngines, Function<EngineType, int[]> otherEngine) {
        this.primary = requireNonNull(primary, "primary");
        this.primaryIsEngines = primaryIsEngines;
        this.otherEngine = requireNonNull(otherEngine, "otherEngine");
    }

    /**
     * A chat whose ids no engine computed (its messages' texts: a text-only model, or a chat whose rendering
     * is not reproduced for any engine): the exact index answers for no worker, so the prefix tree does
     * (in {@code --cache-index auto}) instead of an exact miss for ids no engine ever cached.
     */
    public static EngineTokenIds routingOnly(int[] routingIds) {
        return new EngineTokenIds(routingIds, false, engine -> null);
    }

    public int[] primary() {
        return primary;
    }

    /**
     * The ids workers of {@code engine} compute, or null when not known (null engine, a worker not typed
     * yet: the primary ids unless they are routing-only).
     */
    public int[] forEngine(EngineType engine) {
        if (engine == null) {
            return primaryIsEngines ? primary : null;
        }
        int[] known = byEngine.get(engine.ordinal());
        if (known == null) {
            int[] computed = otherEngine.apply(engine);
            known = computed == null ? UNKNOWN : computed;
            byEngine.set(engine.ordinal(), known);
        }
        return known == UNKNOWN ? null : known;
    }

    /**
     * {@code source}'s matched tokens for {@code candidates}, each looked up with the ids of its own engine:
     * one lookup when they all share the primary ids (one pass over the candidates comparing engines), else
     * one per distinct rendering, each answer kept for its own workers only. Workers whose engine's ids are
     * not known are left out, so the tree answers for them (in {@code --cache-index auto}).
     *
     * @param byEngine the request's per-engine ids, or null: {@code tokenIds} for every worker
     */
    static Map<String, Long> matchedTokens(ExactPrefixSource source, List<Worker> candidates, int[] tokenIds,
            EngineTokenIds byEngine, String adapter, PromptExtras extras) {
        if (byEngine == null) {
            return source.matchedTokens(candidates, tokenIds, adapter, extras);
        }
        Map<int[], List<Worker>> groups = null;
        EngineType lastEngine = null;
        int[] lastIds = byEngine.forEngine(null);
        for (int i = 0; i < candidates.size(); i++) {
            Worker w = candidates.get(i);
            if (w.engine() != lastEngine) {
                lastEngine = w.engine();
                lastIds = byEngine.forEngine(lastEngine);
            }
            if (groups == null && lastIds != byEngine.primary) {
                groups = new IdentityHashMap<>(4);
                if (i > 0) {
                    groups.put(byEngine.primary, new ArrayList<>(candidates.subList(0, i)));
                }
            }
            if (groups != null && lastIds != null) {
                groups.computeIfAbsent(lastIds, k -> new ArrayList<>()).add(w);
            }
        }
        if (groups == null) {
            return source.matchedTokens(candidates, byEngine.primary, adapter, extras);
        }
        Map<String, Long> out = new HashMap<>();
        groups.forEach((ids, workers) -> {
            Map<String, Long> answers = source.matchedTokens(workers, ids, adapter, extras);
            for (Worker w : workers) {
                Long matched = answers.get(w.id());
                if (matched != null) {
                    out.put(w.id(), matched);
                }
            }
        });
        return out;
    }
}
