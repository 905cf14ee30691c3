package io.kvroute.router.dispatch;

import io.kvroute.router.trace.TraceSpan;
import io.kvroute.router.worker.Worker;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The one place every upstream request is built: plain and streaming relays, PD prefill and decode
 * calls, continuation segments and retries all come through here, so timeouts, the Accept header
 * and the {@link UpstreamHook}s apply to all of them alike.
 *
 * <p>Timeouts: the request timeout bounds every call. The idle timeout is for streams and for PD
 * calls; a non-streaming plain answer is legitimately silent until the whole generation is done,
 * so only the request timeout bounds it. Thread-safe.
 */
public final class UpstreamRequests {

    private final long timeoutMillis;
    private final long idleTimeoutMillis;
    private final List<UpstreamHook> hooks = new CopyOnWriteArrayList<>();

    public UpstreamRequests(long timeoutMillis, long idleTimeoutMillis) {
        this.timeoutMillis = timeoutMillis;
        this.idleTimeoutMillis = idleTimeoutMillis;
    }

    /** Adds a hook that runs for every upstream request built from now on. */
    public void addHook(UpstreamHook hook) {
        hooks.add(Objects.requireNonNull(hook, "hook"));
    }

    /**
     * Request header that pins a vLLM request to one data-parallel rank (vLLM
     * {@code vllm/entrypoints/generate/base/serving.py}, read on chat, completions and generate).
     */
    public static final String DATA_PARALLEL_RANK = "X-data-parallel-rank";

    /** A request to a plain worker. */
    public UpstreamRequest plain(Worker worker, String path, byte[] body, boolean streaming, int attempt, TraceSpan span) {
        return plain(worker, path, body, streaming, attempt, span, -1);
    }

    /** A request to a plain worker, pinned to {@code dataParallelRank} by header when it is not negative. */
    public UpstreamRequest plain(Worker worker, String path, byte[] body, boolean streaming, int attempt, TraceSpan span,
            int dataParallelRank) {
        return build(new UpstreamHook.Target(Failure.Hop.WORKER, worker, path, attempt, 0, span), body, streaming,
                streaming ? idleTimeoutMillis : timeoutMillis, dataParallelRank);
    }

    /** The prefill side of a PD segment attempt (its answer is buffered, never streamed to the client). */
    public UpstreamRequest prefill(Worker worker, String path, byte[] body, int attempt, int segment, TraceSpan span) {
        return build(new UpstreamHook.Target(Failure.Hop.PREFILL, worker, path, attempt, segment, span), body, null,
                idleTimeoutMillis);
    }

    /** The decode side of a PD segment attempt. */
    public UpstreamRequest decode(Worker worker, String path, byte[] body, boolean streaming, int attempt, int segment,
            TraceSpan span) {
        return build(new UpstreamHook.Target(Failure.Hop.DECODE, worker, path, attempt, segment, span), body, streaming,
                idleTimeoutMillis);
    }

    private UpstreamRequest build(UpstreamHook.Target target, byte[] body, Boolean streaming, long idleMillis) {
        return build(target, body, streaming, idleMillis, -1);
    }

    private UpstreamRequest build(UpstreamHook.Target target, byte[] body, Boolean streaming, long idleMillis,
            int dataParallelRank) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (streaming != null) {
            headers.put("Accept", streaming ? "text/event-stream" : "application/json");
        }
        if (dataParallelRank >= 0) {
            headers.put(DATA_PARALLEL_RANK, Integer.toString(dataParallelRank));
        }
        for (UpstreamHook hook : hooks) {
            hook.decorate(target, headers);
        }
        return new UpstreamRequest(target.hop(), target.worker().url() + target.path(), body, Collections.unmodifiableMap(headers),
                timeoutMillis, idleMillis);
    }
}
