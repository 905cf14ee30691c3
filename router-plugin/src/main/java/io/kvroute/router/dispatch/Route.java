package io.kvroute.router.dispatch;

import io.kvroute.router.load.EngineLoadSnapshot;
import io.kvroute.router.policy.EngineTokenIds;
import io.kvroute.router.worker.EngineType;
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
 * @param bodyWithoutIds when the router spliced {@code input_ids} into {@code body}, the client's body
 *        without them, for engines that ignore ids on chat (vLLM); null when {@code body} has no router ids
 * @param enginePriority the class to write as the engine's {@code priority} field, or null for none
 * @param engineTokenIds a chat's ids as each engine computes them, for the exact KV index, or null when
 *        {@code tokenIds} hold for every engine
 */
public record Route(ApiKind api, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
        EngineLoadSnapshot loads, RouteHints hints, Supplier<List<Worker>> pool, byte[] bodyWithoutIds,
        EnginePriority enginePriority, EngineTokenIds engineTokenIds) {

    public Route(ApiKind api, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
            EngineLoadSnapshot loads, RouteHints hints, Supplier<List<Worker>> pool, byte[] bodyWithoutIds,
            EnginePriority enginePriority) {
        this(api, body, streaming, inputTokens, tokenIds, loads, hints, pool, bodyWithoutIds, enginePriority, null);
    }

    public Route(ApiKind api, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
            EngineLoadSnapshot loads, RouteHints hints, Supplier<List<Worker>> pool) {
        this(api, body, streaming, inputTokens, tokenIds, loads, hints, pool, null, null);
    }

    public Route(ApiKind api, byte[] body, boolean streaming, long inputTokens, int[] tokenIds,
            EngineLoadSnapshot loads, RouteHints hints, Supplier<List<Worker>> pool, byte[] bodyWithoutIds) {
        this(api, body, streaming, inputTokens, tokenIds, loads, hints, pool, bodyWithoutIds, null);
    }

    /**
     * The body to send to {@code worker}: never router-forwarded {@code input_ids} on chat to a vLLM
     * worker, which drops the field silently and renders the messages itself (vLLM
     * {@code vllm/entrypoints/openai/chat_completion/protocol.py} has no such field); the engine's own
     * rendering is then what runs, and the ids only routed.
     */
    public byte[] bodyFor(Worker worker) {
        return bodyWithoutIds != null && worker.engine() == EngineType.VLLM ? bodyWithoutIds : body;
    }
}
