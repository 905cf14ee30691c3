package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KeyBuilderTest {
    @Test
    void sampled_keepsEveryStrideCodePointStartingAtZero() {
        assertThat(KeyBuilder.sampled("abcdefg", 3)).containsExactly('a', 'd', 'g');
        assertThat(KeyBuilder.sampled("abcdef", 3)).containsExactly('a', 'd');
        assertThat(KeyBuilder.sampled("", 512)).isEmpty();
    }

    @Test
    void sampled_countsANonBmpCharacterAsOneCodePoint() {
        String text = "😀b😁d中f";
        assertThat(KeyBuilder.sampled(text, 2)).containsExactly(0x1F600, 0x1F601, '中');
        assertThat(KeyBuilder.sampled(text, 1)).containsExactly(KeyBuilder.codePoints(text));
    }

    @Test
    void codePoints_keepsSurrogatePairsTogether() {
        assertThat(KeyBuilder.codePoints("a😀")).containsExactly('a', 0x1F600);
    }

    @Test
    void tokens_copiesTheIds() {
        int[] ids = {1, 2, 3};
        int[] key = KeyBuilder.tokens(ids);
        ids[0] = 9;
        assertThat(key).containsExactly(1, 2, 3);
    }

    @Test
    void sampledDepthToChars_followsLightLlmsHitEstimate() {
        assertThat(KeyBuilder.sampledDepthToChars(0, 512, 10_000)).isZero();
        assertThat(KeyBuilder.sampledDepthToChars(1, 512, 10_000)).isEqualTo(1);
        assertThat(KeyBuilder.sampledDepthToChars(3, 512, 10_000)).isEqualTo(1_025);
        assertThat(KeyBuilder.sampledDepthToChars(25, 512, 10_000)).isEqualTo(10_000);
    }
}
