package io.kvroute.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PageHashTest {

    /**
     * Expected values computed outside Java with Python's hashlib, re-typing SGLang's
     * {@code get_hash_str} / {@code hash_str_to_int64} (sgl-project/sglang
     * {@code python/sglang/srt/mem_cache/utils.py}): chained SHA-256 over the parent's digest and
     * 4-byte little-endian tokens, first 16 hex digits folded to a signed int64. The tokens include a
     * value above 2^16 so the byte order matters, and a trailing partial page that has no hash.
     */
    @Test
    void hashesEqualSglangsPageHashes() {
        int[] tokens = {151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198, 151644, 872, 198, 9707, 0, 70000};
        assertThat(new PageHash(4).hashes(tokens, tokens.length)).containsExactly(
                3688083418440573839L, -8317141694172961296L, 8912345834174742815L, 9035263944857828994L);
        assertThat(new PageHash(3).hashes(new int[] {1, 2, 3}, 3)).containsExactly(5059399719711515881L);
    }

    @Test
    void aPartialPageHasNoHash_andTheChainDependsOnEveryEarlierPage() {
        PageHash h = new PageHash(2);
        assertThat(h.hashes(new int[] {1}, 1)).isEmpty();
        long[] a = h.hashes(new int[] {1, 2, 3, 4}, 4);
        long[] b = h.hashes(new int[] {9, 2, 3, 4}, 4);
        assertThat(a[1]).isNotEqualTo(b[1]);
        assertThat(h.hashes(new int[] {1, 2, 3, 4, 5}, 5)).containsExactly(a);
    }
}
