package io.kvroute.router.policy;

import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.Map;

/**
 * An exact source of "how many of this request's tokens does each worker have cached", built from
 * the engines' own KV events ({@code --cache-index}). The cache-aware ladder takes its answer in
 * place of the approximate prefix tree's, worker by worker.
 */
public interface ExactPrefixSource {

    /**
     * Matched tokens (whole engine blocks × block size) for each candidate this source answers for
     * exactly (its events are live); workers it cannot answer for are absent from the map. The map may
     * also hold workers that are not candidates (a source may walk what it knows instead of the
     * candidates when that is smaller): callers use only the entries of their candidates. Lock-free;
     * any thread.
     *
     * @param tokenIds the request's ingress token ids
     */
    Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds);

    /**
     * The data-parallel rank of {@code worker} that holds the longest prefix of {@code tokenIds}, so
     * the request can be pinned there (vLLM's {@code X-data-parallel-rank}); -1 when the worker has
     * one rank, no rank holds a block of the prompt, or this source cannot answer for it. Ties go to
     * the lowest rank. Lock-free; any thread. Called for the one chosen worker only, after
     * {@link #matchedTokens}, so it may hash the prompt again.
     */
    default int bestRank(Worker worker, int[] tokenIds) {
        return -1;
    }

    /**
     * As {@link #bestRank(Worker, int[])} for a request naming {@code adapter} (null: the base model) and
     * carrying {@code extras}: the rank holding the longest prefix of the blocks this request would reuse. A
     * source that keys blocks by neither answers as for the base model.
     */
    default int bestRank(Worker worker, int[] tokenIds, String adapter, PromptExtras extras) {
        return bestRank(worker, tokenIds);
    }

    /**
     * As {@link #matchedTokens(List, int[])} for a request naming LoRA adapter {@code adapter} (null:
     * the base model): only blocks stored under that adapter count. A source that does not key
     * blocks by adapter answers for the base model only, and nothing for an adapter.
     */
    default Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds, String adapter) {
        return adapter == null ? matchedTokens(candidates, tokenIds) : Map.of();
    }

    /**
     * As {@link #matchedTokens(List, int[], String)} for a request that also carries {@code extras}: a source
     * keyed by an engine's own block hashes counts only blocks hashed with them (vLLM folds a cache salt
     * into the first block), and answers nothing for a worker whose hashes it cannot compute for this
     * request (multimodal items, prompt embeddings). A source keyed by tokens ignores them.
     */
    default Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds, String adapter,
            PromptExtras extras) {
        return matchedTokens(candidates, tokenIds, adapter);
    }
}
