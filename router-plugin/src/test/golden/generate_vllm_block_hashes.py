#!/usr/bin/env python3
"""Golden vLLM prefix-cache block hashes from the real Python stack (hashlib + cbor2 + xxhash).

Reproduces vLLM's recipe with the libraries vLLM itself calls, for both CBOR algorithms of
--prefix-caching-hash-algo (vllm/utils/hashing.py get_hash_fn_by_name):
    sha256_cbor(x)  = hashlib.sha256(cbor2.dumps(x, canonical=True)).digest()   # vllm/utils/hashing.py
    xxhash_cbor(x)  = xxhash.xxh3_128_digest(cbor2.dumps(x, canonical=True))     # same file, _xxhash_digest
    NONE_HASH       = hash_fn(os.environ["PYTHONHASHSEED"])                       # kv_cache_utils.py init_none_hash
    block_hash(b)   = hash_fn((parent or NONE_HASH, tuple(tokens_b), extra_keys_b))  # hash_block_tokens
where extra_keys_b is vLLM's tuple(lora_extra_keys + cache_salt_keys) or None when empty: (lora_name,)
for every block of a LoRA request and the request's cache_salt after it on the first block only, when
the salt is truthy (vllm/v1/core/kv_cache_utils.py generate_block_hash_extra_keys,
_gen_lora_extra_hash_keys: [request.cache_salt] if (start_token_idx == 0 and request.cache_salt)), and
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


def extra_keys(start_token_idx, lora_name, cache_salt):
    """vLLM's generate_block_hash_extra_keys for a text request (no multimodal items, no prompt embeds)."""
    lora_extra_keys = [lora_name] if lora_name is not None else []
    cache_salt_keys = [cache_salt] if (start_token_idx == 0 and cache_salt) else []
    keys = lora_extra_keys + cache_salt_keys
    return tuple(keys) if keys else None


def chain(hash_fn, seed, block_size, tokens, lora_name, cache_salt):
    none_hash = hash_fn(seed)
    parent = None
    out = []
    for start in range(0, len(tokens) - block_size + 1, block_size):
        extra = extra_keys(start, lora_name, cache_salt)
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
                CASES.append((seed, block_size, name, tokens, lora, None))
# cache_salt (vLLM's OpenAI request field): a short one, one whose UTF-8 length needs a one-byte CBOR head
# (a 43-character base64 salt, as vLLM's docs suggest), multi-byte UTF-8, and the empty string (falsy:
# no salt key, so the plain chain)
SALTS = ["tenant-a", "q0ZC3hbE1rA2mYl8y4Xo0b8nVxw0xqkqv3nE8cP1bq4", "mandant-\u00fc-\U0001f511", ""]
for seed in ["0", "42"]:
    for block_size in [1, 4, 16]:
        for name in ("small", "widths"):
            for lora in [None, "sql-lora"]:
                for salt in SALTS:
                    CASES.append((seed, block_size, name, SEQUENCES[name], lora, salt))

out = {"cbor_uint": [], "cases": []}
for v in [0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1]:
    out["cbor_uint"].append({"value": str(v), "cbor": cbor2.dumps(v, canonical=True).hex()})
for seed, block_size, name, tokens, lora, salt in CASES:
    case = {"seed": seed, "block_size": block_size, "sequence": name, "tokens": tokens, "lora_name": lora,
            "cache_salt": salt}
    for algo, fn in (("sha256_cbor", sha256_cbor), ("xxhash_cbor", xxhash_cbor)):
        none_hash, digests = chain(fn, seed, block_size, tokens, lora, salt)
        first_block_cbor = cbor2.dumps(
            (none_hash, tuple(tokens[:block_size]), extra_keys(0, lora, salt)), canonical=True).hex()
        case[algo] = {"none_hash": none_hash.hex(), "first_block_cbor": first_block_cbor,
                      "digests": [d.hex() for d in digests], "wire": [str(wire(d)) for d in digests]}
    out["cases"].append(case)
print("{\"cbor_uint\": " + json.dumps(out["cbor_uint"]) + ",\n \"cases\": [")
print(",\n".join("  " + json.dumps(c) for c in out["cases"]))
print(" ]}")
