package io.kvroute.router.dispatch;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.nio.charset.StandardCharsets;

/**
 * The bytes each leg of a prefill/decode pair is sent. A vLLM worker never gets the router's
 * {@code input_ids} on chat: it drops the field silently and renders the messages itself (vLLM
 * {@code vllm/entrypoints/openai/chat_completion/protocol.py} has no such field), so a vLLM leg gets
 * the segment's body without them (the bootstrap fields stay) and an SGLang leg keeps them. Ids the
 * caller sent itself are never touched. Pure: the caller counts {@link #legsWithoutIds()}.
 *
 * @param prefill the prefill leg's body
 * @param decode the decode leg's body
 * @param legsWithoutIds how many legs were left without the router's ids (0..2)
 */
record PdLegBodies(byte[] prefill, byte[] decode, int legsWithoutIds) {

    /**
     * @param segmentBody the segment's body with the bootstrap rendezvous
     * @param routerIds whether its {@code input_ids} are the router's own (a first segment of a request the
     *        router tokenized and forwarded ids for; continuations drop them themselves)
     */
    static PdLegBodies of(ObjectNode segmentBody, boolean routerIds, Worker prefillWorker, Worker decodeWorker) {
        byte[] withIds = segmentBody.toString().getBytes(StandardCharsets.UTF_8);
        boolean prefillVllm = prefillWorker.engine() == EngineType.VLLM;
        boolean decodeVllm = decodeWorker.engine() == EngineType.VLLM;
        if (!routerIds || !segmentBody.has("input_ids") || !(prefillVllm || decodeVllm)) {
            return new PdLegBodies(withIds, withIds, 0);
        }
        ObjectNode copy = segmentBody.deepCopy();
        copy.remove("input_ids");
        byte[] withoutIds = copy.toString().getBytes(StandardCharsets.UTF_8);
        return new PdLegBodies(prefillVllm ? withoutIds : withIds, decodeVllm ? withoutIds : withIds,
                (prefillVllm ? 1 : 0) + (decodeVllm ? 1 : 0));
    }
}
