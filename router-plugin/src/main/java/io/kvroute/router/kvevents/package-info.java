/**
 * Precise prefix-cache routing from the engines' own KV events (as Dynamo and llm-d do;
 * wire format of vLLM {@code vllm/distributed/kv_events.py}, discovery through SGLang's
 * {@code /server_info} {@code kv_events} block, {@code python/sglang/srt/server_args.py}).
 *
 * <p>Start reading at {@link io.kvroute.router.kvevents.KvEventsPlane} (membership and the published
 * snapshot, on the shared {@link io.kvroute.router.zmq.SubscriberLoop}), {@link io.kvroute.router.kvevents.EventRank}
 * (one engine dp rank: its SUB and replay DEALER, what its batches do to the index) and
 * {@link io.kvroute.router.kvevents.BlockIndex} (the block-level index the cache-aware policy asks
 * through {@link io.kvroute.router.kvevents.ExactCacheIndex}). The pure parts, with no ZeroMQ import:
 * {@link io.kvroute.protocol.KvEventWire} (both wire encodings, shared with the scheduler plugin),
 * {@link io.kvroute.router.kvevents.PublisherStream} (sequence, gaps, replay, restarts),
 * {@link io.kvroute.protocol.PageHash} (SGLang's chained page hash),
 * {@link io.kvroute.protocol.VllmBlockHash} (vLLM's {@code sha256_cbor} and {@code xxhash_cbor} chains, for a
 * vLLM worker whose template states its algorithm and seed; {@link io.kvroute.router.kvevents.SubscriptionRule} decides) and
 * the index. For
 * engines whose hashes cannot be reproduced ({@code --kv-events-hash tokens}):
 * {@link io.kvroute.router.kvevents.TokenChainHash} (the router's own hash of token ids, used for
 * events and requests alike) and {@link io.kvroute.router.kvevents.TokenKeying} (one publisher's
 * engine-hash to own-hash map).
 */
package io.kvroute.router.kvevents;
