/**
 * The wire formats both plugins speak, each implemented once, encode and decode side by side, with no
 * dependency on either plugin: {@link io.kvroute.protocol.PageHash} (SGLang's chained page hash),
 * {@link io.kvroute.protocol.VllmBlockHash} (vLLM's sha256_cbor and xxhash_cbor block hash chains),
 * {@link io.kvroute.protocol.LoadStatWire} (the LoadStat load report) and
 * {@link io.kvroute.protocol.KvEventWire} (the engines' KV-event batches in SGLang's and vLLM's
 * shapes, and the replay answer frames). Start reading at the {@code *Wire} class of the format; the
 * records beside it are the decoded values the router works on.
 */
package io.kvroute.protocol;
