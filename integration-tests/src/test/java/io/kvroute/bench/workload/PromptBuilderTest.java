package io.kvroute.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PromptBuilderTest {

    @Test
    void textHasExactlyTargetTokensTimesCharsPerToken() {
        PromptBuilder prompts = new PromptBuilder(new SplittableRandom(1), 4.0);
        for (int tokens : new int[] {0, 1, 7, 128, 4_096, 16_384}) {
            String text = prompts.text(tokens);
            assertThat(text).hasSize(tokens * 4);
            assertThat(text).matches("[a-z ]*").doesNotEndWith(" ").doesNotStartWith(" ");
        }
        assertThat(new PromptBuilder(new SplittableRandom(1), 3.5).text(10)).hasSize(35);
    }

    @Test
    void sameSeed_sameText_differentSeedOrNextPrompt_differentText() {
        String a = new PromptBuilder(new SplittableRandom(9), 4).text(256);
        PromptBuilder again = new PromptBuilder(new SplittableRandom(9), 4);
        String b = again.text(256);
        String next = again.text(256);
        String other = new PromptBuilder(new SplittableRandom(10), 4).text(256);

        assertThat(a).isEqualTo(b);
        // distinct random words: independent prompts do not even share their first 12 characters
        assertThat(next.substring(0, 12)).isNotEqualTo(a.substring(0, 12));
        assertThat(other.substring(0, 12)).isNotEqualTo(a.substring(0, 12));
    }

    @Test
    void wordsAreSeparatedBySingleSpaces() {
        String text = new PromptBuilder(new SplittableRandom(3), 4).text(1_000);

        assertThat(text).doesNotContain("  ");
        assertThat(text.split(" ")).allSatisfy(w -> assertThat(w.length()).isBetween(1, 9));
    }

    @Test
    void rejectsNonPositiveCharsPerTokenAndNegativeTargets() {
        assertThatThrownBy(() -> new PromptBuilder(new SplittableRandom(1), 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PromptBuilder(new SplittableRandom(1), 4).text(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
