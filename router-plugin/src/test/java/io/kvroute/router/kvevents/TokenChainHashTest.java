package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TokenChainHashTest {

    @Test
    void hashes_chainNextFromTheAdaptersRoot_soEventsAndRequestsMeet() {
        int[] tokens = {151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 0};
        long[] q = TokenChainHash.hashes(tokens, tokens.length, 4, -1);
        assertThat(q).hasSize(2); // the partial block has no hash
        long first = TokenChainHash.next(TokenChainHash.root(-1), tokens, 0, 4);
        assertThat(q).containsExactly(first, TokenChainHash.next(first, tokens, 4, 4));
        assertThat(TokenChainHash.hashes(tokens, tokens.length, 4, 7)[0]).isNotEqualTo(q[0]);
    }

    @Test
    void everyTokenEveryPositionAndTheParentMatter() {
        int[] a = {1, 2, 3, 4, 5};
        long base = TokenChainHash.next(11, a, 0, 5);
        assertThat(TokenChainHash.next(12, a, 0, 5)).isNotEqualTo(base);
        for (int i = 0; i < a.length; i++) {
            int[] b = a.clone();
            b[i]++;
            assertThat(TokenChainHash.next(11, b, 0, 5)).as("token %d", i).isNotEqualTo(base);
        }
        assertThat(TokenChainHash.next(11, new int[] {2, 1, 3, 4, 5}, 0, 5)).isNotEqualTo(base);
        // an odd tail is not a zero token, and a block is not its prefix
        assertThat(TokenChainHash.next(11, new int[] {1, 0}, 0, 2)).isNotEqualTo(TokenChainHash.next(11, new int[] {1}, 0, 1));
    }

    @Test
    void randomBlocks_doNotCollide() {
        SplittableRandom rnd = new SplittableRandom(5);
        Set<Long> seen = new HashSet<>();
        int[] block = new int[16];
        for (int i = 0; i < 200_000; i++) {
            for (int k = 0; k < block.length; k++) {
                block[k] = rnd.nextInt(5); // a tiny vocabulary: many near-identical blocks
            }
            seen.add(TokenChainHash.next(rnd.nextInt(3), block, 0, block.length));
        }
        // about 2^32 distinct inputs of which 200k drawn: collisions would be 64-bit bad luck
        assertThat(seen.size()).isGreaterThanOrEqualTo(199_995);
    }
}
