#!/usr/bin/env python3
"""Golden vLLM prefix-cache block hashes from the real Python stack (hashlib + cbor2 + xxhash).

Reproduces vLLM's recipe with the libraries vLLM itself calls, for both CBOR algorithms of
--prefix-caching-hash-algo (vllm/utils/hashing.py get_hash_fn_by_name):
    sha256_cbor(x)  = hashlib.sha256(cbor2.dumps(x, canonical=True)).digest()   # vllm/utils/hashing.py
    xxhash_cbor(x)  = xxhash.xxh3_128_digest(cbor2.dumps(x, canonical=True))     # same file, _xxhash_digest
    NONE_HASH       = hash_fn(os.environ["PYTHONHASHSEED"])                       # kv_cache_utils.py init_none_hash
    block_hash(b)   = hash_fn((parent or NONE_HASH, tuple(tokens_b), extra_keys_b))  # hash_block_tokens
where extra_keys_b is None for a plain text request and (lora_name,) for every block of a LoRA request
(vllm/v1/core/kv_cache_utils.py generate_block_hash_extra_keys, _gen_lora_extra_hash_keys), and
the wire value is int.from_bytes(digest, "big") & (2**64 - 1) (maybe_convert_block_hash), for a
16-byte XXH3-128 digest as for a 32-byte SHA-256 one.

Environment:
    pip install --index-url file:///opt/pypi/simple cbor2==6.1.4 xxhash==4.0.1
Usage, from the repository root:
    python3 router-plugin/src/test/golden/generate_vllm_block_hashes.py \
        > router-plugin/src/test/resources/vllm-hash/block_hashes.json
The output is deterministic: fixed cases in a fixed order, one case per line.
"""
import hashlib
import json

import cbor2
import xxhash


def sha256_cbor(x):
    return hashlib.sha256(cbor2.dumps(x, canonical=True)).digest()


def xxhash_cbor(x):
    return xxhash.xxh3_128_digest(cbor2.dumps(x, canonical=True))


def chain(hash_fn, seed, block_size, tokens, lora_name):
    none_hash = hash_fn(seed)
    parent = None
    out = []
    for start in range(0, len(tokens) - block_size + 1, block_size):
        extra = (lora_name,) if lora_name is not None else None
        h = hash_fn((parent or none_hash, tuple(tokens[start:start + block_size]), extra))
        out.append(h)
        parent = h
    return none_hash, out


def wire(digest):
    return int.from_bytes(digest, "big") & ((1 << 64) - 1)


SEQUENCES = {
    "small": list(range(1, 17)),
    "zeros": [0] * 32,
    "widths": [0, 23, 24, 255, 256, 65535, 65536, 2**31 - 1, 151643, 128000, 1, 2, 3, 4, 5, 6],
    "ragged": [7 * i + 3 for i in range(37)],
    "large_ids": [2**31 - 1 - i for i in range(48)],
}
CASES = []
for seed in ["0", "42", "kvroute-seed"]:
    for block_size in [1, 4, 16]:
        for name, tokens in SEQUENCES.items():
            for lora in [None, "sql-lora"]:
                if lora is not None and name not in ("small", "widths"):
                    continue
                CASES.append((seed, block_size, name, tokens, lora))

out = {"cbor_uint": [], "cases": []}
for v in [0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1]:
    out["cbor_uint"].append({"value": str(v), "cbor": cbor2.dumps(v, canonical=True).hex()})
for seed, block_size, name, tokens, lora in CASES:
    case = {"seed": seed, "block_size": block_size, "sequence": name, "tokens": tokens, "lora_name": lora}
    for algo, fn in (("sha256_cbor", sha256_cbor), ("xxhash_cbor", xxhash_cbor)):
        none_hash, digests = chain(fn, seed, block_size, tokens, lora)
        first_block_cbor = cbor2.dumps(
            (none_hash, tuple(tokens[:block_size]), (lora,) if lora else None), canonical=True).hex()
        case[algo] = {"none_hash": none_hash.hex(), "first_block_cbor": first_block_cbor,
                      "digests": [d.hex() for d in digests], "wire": [str(wire(d)) for d in digests]}
    out["cases"].append(case)
print("{\"cbor_uint\": " + json.dumps(out["cbor_uint"]) + ",\n \"cases\": [")
print(",\n".join("  " + json.dumps(c) for c in out["cases"]))
print(" ]}")
