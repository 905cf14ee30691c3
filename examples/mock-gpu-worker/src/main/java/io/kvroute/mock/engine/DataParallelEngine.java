package io.kvroute.mock.engine;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * Several engines behind one HTTP server, as vLLM runs {@code --data-parallel-size N} with its
 * internal load balancer: each rank is an independent engine with its own queue and prefix cache,
 * and the API server picks the rank per request. A request may name its rank (vLLM's
 * {@code X-data-parallel-rank} header, vLLM {@code vllm/entrypoints/generate/base/serving.py});
 * otherwise the rank with the lowest {@code waiting * 4 + running} wins, ties going to the lowest
 * rank (vLLM {@code vllm/v1/engine/core_client.py}, {@code DPLBAsyncMPClient.get_core_engine_for_request},
 * which reads counts the coordinator publishes every 100 ms; the mock reads them live).
 *
 * <p>Threading: as {@link Engine}; the rank choice reads each rank's thread-safe {@link Engine#stats}.
 */
public final class DataParallelEngine implements Engine {

    private final List<Engine> ranks;
    private final AtomicLongArray requestsByRank;

    public DataParallelEngine(List<Engine> ranks) {
        if (ranks.isEmpty()) {
            throw new IllegalArgumentException("at least one rank");
        }
        this.ranks = List.copyOf(ranks);
        this.requestsByRank = new AtomicLongArray(ranks.size());
    }

    /** The rank engines, rank 0 first. */
    public List<Engine> ranks() {
        return ranks;
    }

    /** Requests each rank was given since start. */
    public long requests(int rank) {
        return requestsByRank.get(rank);
    }

    /** The rank vLLM's internal load balancer would pick now. */
    public int leastLoadedRank() {
        int best = 0;
        long bestScore = Long.MAX_VALUE;
        for (int r = 0; r < ranks.size(); r++) {
            EngineStats s = ranks.get(r).stats();
            long score = 4L * s.numWaitingReqs() + s.numRunningReqs();
            if (score < bestScore) {
                bestScore = score;
                best = r;
            }
        }
        return best;
    }

    @Override
    public Submission submit(EngineRequest request, TokenSink sink) {
        return submit(request, sink, -1);
    }

    /**
     * Admits a request on {@code rank}, or on the least loaded rank when {@code rank} is negative.
     *
     * @throws IllegalArgumentException when {@code rank} is not below the rank count
     */
    public Submission submit(EngineRequest request, TokenSink sink, int rank) {
        if (rank >= ranks.size()) {
            throw new IllegalArgumentException("data parallel rank " + rank + " is out of range [0, " + ranks.size() + ")");
        }
        int chosen = rank < 0 ? leastLoadedRank() : rank;
        requestsByRank.incrementAndGet(chosen);
        return ranks.get(chosen).submit(request, sink);
    }

    /** The ranks' counters summed; capacity is the sum of the ranks' capacities. */
    @Override
    public EngineStats stats() {
        int running = 0;
        int waiting = 0;
        long used = 0;
        long total = 0;
        long capacity = 0;
        long waitingUncached = 0;
        long prefillUncached = 0;
        long prefillBusy = 0;
        long processed = 0;
        long steps = 0;
        for (Engine e : ranks) {
            EngineStats s = e.stats();
            running += s.numRunningReqs();
            waiting += s.numWaitingReqs();
            used += s.numUsedTokens();
            total += s.numTotalTokens();
            capacity += s.maxTotalNumTokens();
            waitingUncached += s.numWaitingUncachedTokens();
            prefillUncached += s.totalPrefillUncachedTokens();
            prefillBusy += s.totalPrefillBusyMicros();
            processed += s.processedPrefillTokens();
            steps += s.steps();
        }
        return new EngineStats(running, waiting, used, total, capacity, waitingUncached, prefillUncached, prefillBusy,
                processed, steps);
    }

    @Override
    public boolean isAlive() {
        for (Engine e : ranks) {
            if (!e.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Rank 0's facts: every rank is configured alike (vLLM's ranks share one config). */
    @Override
    public EngineInfo info() {
        return ranks.get(0).info();
    }

    @Override
    public Map<String, Object> schedulerView() {
        Map<String, Object> view = new LinkedHashMap<>();
        List<Map<String, Object>> perRank = new ArrayList<>();
        for (Engine e : ranks) {
            perRank.add(e.schedulerView());
        }
        view.put("ranks", perRank);
        return view;
    }

    @Override
    public void addStepListener(Consumer<EngineStats> listener) {
        requireNonNull(listener, "listener");
        ranks.forEach(e -> e.addStepListener(listener));
    }

    /** One sink for every rank cannot tell ranks apart; set each rank's sink on {@link #ranks()} instead. */
    @Override
    public void setCacheEventSink(CacheEventSink sink) {
        throw new UnsupportedOperationException("set a cache event sink on each rank (ranks())");
    }

    /** Flushes every rank; true when every rank flushed. */
    @Override
    public CompletableFuture<Boolean> flushCache() {
        List<CompletableFuture<Boolean>> all = new ArrayList<>();
        ranks.forEach(e -> all.add(e.flushCache()));
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .thenApply(v -> all.stream().allMatch(CompletableFuture::join));
    }

    @Override
    public void close() {
        ranks.forEach(Engine::close);
    }
}
