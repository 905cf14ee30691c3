"""Golden vLLM KV-event payloads for the decoder (io.kvroute.protocol.KvEventWire) and the events plane, written with plain msgpack
(pip msgpack), independently of kvroute's encoder. Run: python3 gen.py (writes *.msgpack here).

Shapes follow vLLM vllm/distributed/kv_events.py: the batch is a positional array
[ts, events, data_parallel_rank] (EventBatch, array_like=True); events are maps tagged by "type"
(KVCacheEvent, tag=True, omit_defaults=True: fields with a None default are left out when None,
fields without a default are always present, nil when None), keys in declaration order; before
vLLM's map encoding events were positional arrays with the tag first. Block hashes are the low 64
bits of the digest as uint64 (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1, the default) or the raw digest
as bin (=0). Python ints and floats pack like msgspec's: smallest int form, float64.
"""
import hashlib
import msgpack

BS = 16
# The prompt tokens of a real vLLM v0.26.0 capture (a Qwen chat template), then more of a chat.
T = [151644, 872, 198, 9064, 374, 279, 6722, 315, 5616, 30, 151645, 198, 151644, 77091, 198, 151667,
     785, 6722, 315, 5616, 374, 26549, 13, 151645, 198, 151644, 872, 198, 3838, 911, 9625, 30,
     151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271, 785, 6722, 315, 9625, 374, 12095, 13]
U = [100 + i for i in range(BS)]


def digest(name):
    return hashlib.sha256(name.encode()).digest()


def low64(d):
    return int.from_bytes(d, "big") & ((1 << 64) - 1)


def stored(hashes, parent, tokens, lora_id=None, medium="GPU", lora_name=None, extra_keys=None, group_idx=None,
           kind=None, window=None):
    e = {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent, "token_ids": tokens,
         "block_size": BS, "lora_id": lora_id, "medium": medium, "lora_name": lora_name}
    for k, v in (("extra_keys", extra_keys), ("group_idx", group_idx), ("kv_cache_spec_kind", kind),
                 ("kv_cache_spec_sliding_window", window)):
        if v is not None:
            e[k] = v
    return e


def removed(hashes, medium="GPU", group_idx=None):
    e = {"type": "BlockRemoved", "block_hashes": hashes, "medium": medium}
    if group_idx is not None:
        e["group_idx"] = group_idx
    return e


def write(name, batch):
    with open(name, "wb") as f:
        f.write(msgpack.packb(batch, use_bin_type=True))


d1, d2, d3 = digest("b1"), digest("b2"), digest("b3")
h1, h2, h3 = low64(d1), low64(d2), low64(d3)

# The decoded v0.26.0 capture, re-encoded as vLLM does (hash above 2^63: a uint64).
write("v0_26_capture.msgpack", [1789095808.8378847, [stored([15760518052499183552], None, T[:BS], extra_keys=[None],
                                                             group_idx=0, kind="full_attention")], 0])
# One request's two new full blocks in one event, a child block, then an eviction; rank 1.
write("multi_block_chain.msgpack", [1789095809.25, [
    stored([h1, h2], None, T[:2 * BS], extra_keys=[None, None], group_idx=0, kind="full_attention"),
    stored([h3], h2, T[2 * BS:3 * BS], extra_keys=[None], group_idx=0, kind="full_attention"),
    removed([h3], group_idx=0)], 1])
# The same chain with VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0: raw 32-byte digests.
write("bytes_hashes.msgpack", [1789095810.5, [
    stored([d1, d2], None, T[:2 * BS], extra_keys=[None, None], group_idx=0, kind="full_attention"),
    stored([d3], d2, T[2 * BS:3 * BS], extra_keys=[None], group_idx=0, kind="full_attention"),
    removed([d3], group_idx=0)], 0])
# A hybrid model: the full-attention group 0 and a sliding-window group 1 announce the same tokens;
# an offloading connector stores other blocks on CPU and drops its CPU copy of block 1.
write("hybrid_tiers.msgpack", [1789095811.0, [
    stored([h1, h2], None, T[:2 * BS], extra_keys=[None, None], group_idx=0, kind="full_attention"),
    stored([low64(digest("s1")), low64(digest("s2"))], None, T[:2 * BS], extra_keys=[None, None], group_idx=1,
           kind="sliding_window", window=128),
    stored([low64(digest("c1"))], None, U, medium="CPU"),
    removed([h1], medium="CPU"),
    removed([low64(digest("s1"))], group_idx=1)], 0])
# An adapter's block (lora_name is in vLLM's hash) and a salted block (cache_salt in extra_keys).
write("lora_extra_keys.msgpack", [1789095812.0, [
    stored([low64(digest("l1"))], None, U, lora_id=1, lora_name="sql-adapter", extra_keys=[["sql-adapter"]],
           group_idx=0, kind="full_attention"),
    stored([low64(digest("x1"))], None, U, extra_keys=[["salt-1"]], group_idx=0, kind="full_attention")], 0])
# vLLM before its map encoding: tagged positional arrays, trailing defaults dropped.
write("legacy_array.msgpack", [1789095813.0, [
    ["BlockStored", [h1], None, T[:BS], BS, None, "GPU", None],
    ["BlockRemoved", [h1], "GPU"],
    ["AllBlocksCleared"]], 0])

if __name__ == "__main__":
    print("h1..h3 =", h1, h2, h3)
