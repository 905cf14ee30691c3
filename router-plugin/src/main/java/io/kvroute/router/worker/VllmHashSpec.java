package io.kvroute.router.worker;

import io.kvroute.protocol.VllmBlockHash;
import java.util.Locale;
import java.util.Set;

/**
 * How a vLLM engine hashes its prefix-cache blocks, as its operator states it in a KV-event template
 * ({@code hash-algo=sha256_cbor;hash-seed=42}): vLLM's {@code --prefix-caching-hash-algo} and the
 * {@code PYTHONHASHSEED} every engine process (every data-parallel rank) runs with. vLLM seeds its
 * chain with {@code NONE_HASH = hash_fn(PYTHONHASHSEED)}, or 32 random bytes per process when the
 * variable is unset (vLLM {@code vllm/v1/core/kv_cache_utils.py}, {@code init_none_hash}), so only a
 * stated seed lets the router compute the engine's hashes. Either part may be absent (null); the
 * subscription rule decides what an incomplete or unreproducible spec means. Immutable.
 *
 * @param algo vLLM's algorithm name, lower case ({@code sha256}, {@code sha256_cbor}, {@code xxhash},
 *     {@code xxhash_cbor}), or null when not stated
 * @param seed the {@code PYTHONHASHSEED} value exactly as set (vLLM hashes the string, so {@code 042} is
 *     not {@code 42}), or null when not stated
 */
public record VllmHashSpec(String algo, String seed) {
    /** vLLM's {@code --prefix-caching-hash-algo} values ({@code vllm/config/cache.py}). */
    private static final Set<String> ALGOS = Set.of("sha256", "sha256_cbor", "xxhash", "xxhash_cbor");

    public VllmHashSpec {
        if (algo != null) {
            algo = algo.toLowerCase(Locale.ROOT);
            if (!ALGOS.contains(algo)) {
                throw new IllegalArgumentException("hash-algo must be one of vLLM's --prefix-caching-hash-algo values "
                        + "sha256, sha256_cbor, xxhash, xxhash_cbor, got '" + algo + "'");
            }
        }
        if (seed != null && !validSeed(seed)) {
            throw new IllegalArgumentException("hash-seed must be the engines' PYTHONHASHSEED, a whole number "
                    + "0..4294967295 (Python refuses anything else; 'random' cannot be reproduced), got '" + seed + "'");
        }
    }

    /** Null when the router can compute these hashes, else what the operator must state or change. */
    public String unreproducibleReason() {
        if (algo == null || seed == null) {
            return "state how vLLM hashes its blocks in the worker's KV-event template: hash-algo=sha256_cbor or "
                    + "xxhash_cbor (vLLM --prefix-caching-hash-algo) and hash-seed=<the PYTHONHASHSEED every engine "
                    + "and rank runs with>; without a seed vLLM's hashes are random per process";
        }
        return VllmBlockHash.parseAlgo(algo);
    }

    /** The spec in template syntax ({@code ;hash-algo=..;hash-seed=..}, empty when nothing is stated). */
    String templateText() {
        return (algo == null ? "" : ";hash-algo=" + algo) + (seed == null ? "" : ";hash-seed=" + seed);
    }

    private static boolean validSeed(String seed) {
        if (seed.isEmpty() || seed.length() > 10) {
            return false;
        }
        for (int i = 0; i < seed.length(); i++) {
            if (seed.charAt(i) < '0' || seed.charAt(i) > '9') {
                return false;
            }
        }
        return Long.parseLong(seed) <= 0xffffffffL;
    }
}
