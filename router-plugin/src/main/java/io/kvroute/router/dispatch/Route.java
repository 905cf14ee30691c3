package io.kvroute.router.dispatch;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.worker.Worker;
import java.util.List;
import java.util.function.Supplier;

/**
 * One validated inference request, ready to dispatch: what the edge learned while admitting it.
 *
 * @param api which API (path and body shape)
 * @param body the outgoing body
 * @param streaming the client asked for SSE
 * @param inputTokens the prompt's token count (exact or estimated)
 * @param tokenIds the prompt's token ids, or null
 * @param loads the load plane's snapshot at admission
 * @param hints session key, routing text, model label
 * @param pool the usable workers for this request, re-read before each attempt
 */
public record Route(ApiKind api, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
        EngineLoadSnapshot loads, RouteHints hints, Supplier<List<Worker>> pool) {}
