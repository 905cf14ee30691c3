package io.kvroute.router.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** TopK against the naive model it replaces: sort everything, keep the first k. */
class TopKTest {

    private record Item(int key, int tieBreak) {}

    private static final Comparator<Item> ORDER = Comparator.comparingInt(Item::key).thenComparingInt(Item::tieBreak);

    @Test
    void equalsSortThenCut_forRandomListsSizesAndCaps() {
        SplittableRandom rnd = new SplittableRandom(19);
        for (int round = 0; round < 2_000; round++) {
            int n = rnd.nextInt(0, 80);
            int keys = 1 + rnd.nextInt(6); // many ties on the key, broken by the unique tieBreak
            List<Item> items = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                items.add(new Item(rnd.nextInt(keys), i));
            }
            java.util.Collections.shuffle(items, new java.util.Random(round));
            int k = rnd.nextInt(0, 40);
            List<Item> naive = new ArrayList<>(items);
            naive.sort(ORDER);
            naive = naive.subList(0, Math.min(k, naive.size()));

            assertThat(TopK.first(new ArrayList<>(items), k, ORDER)).as("round %d n=%d k=%d", round, n, k)
                    .containsExactlyElementsOf(naive);
        }
    }
}
