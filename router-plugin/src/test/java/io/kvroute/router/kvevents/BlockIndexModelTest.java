package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The index against a naive model: per slot a plain set of block hashes, and a match is the number
 * of leading hashes of a chain the slot holds. Random stores, removals, clears and queries over a
 * small universe of hash chains (so they share prefixes), many slots (past one 64-bit mask word),
 * checked after every operation; invariants in {@link #check}.
 */
class BlockIndexModelTest {
    private static final BlockIndex.Key KEY = new BlockIndex.Key("m", -1, 16);
    private static final int SLOTS = 70;

    @Test
    void randomOperations_matchANaiveModel() {
        for (long seed = 1; seed <= 6; seed++) {
            run(new SplittableRandom(seed), 4000, Integer.MAX_VALUE);
        }
    }

    @Test
    void perSlotBound_refusesStoresBeyondIt_likeTheModelWithTheSameBound() {
        run(new SplittableRandom(42), 3000, 25);
    }

    private static void run(SplittableRandom rnd, int ops, int bound) {
        BlockIndex index = new BlockIndex(bound);
        Map<Integer, Set<Long>> model = new HashMap<>();
        List<long[]> chains = new ArrayList<>();
        for (int c = 0; c < 12; c++) {
            long[] chain = new long[1 + rnd.nextInt(40)];
            long[] earlier = c > 0 ? chains.get(rnd.nextInt(c)) : new long[0];
            boolean share = rnd.nextBoolean();
            for (int i = 0; i < chain.length; i++) {
                // chains share prefixes: half of them start with an earlier chain's first blocks
                chain[i] = share && i < 5 && i < earlier.length ? earlier[i] : rnd.nextLong();
            }
            chains.add(chain);
        }
        for (int op = 0; op < ops; op++) {
            int slot = rnd.nextInt(SLOTS);
            long[] chain = chains.get(rnd.nextInt(chains.size()));
            int from = rnd.nextInt(chain.length);
            int to = from + 1 + rnd.nextInt(chain.length - from);
            long[] part = java.util.Arrays.copyOfRange(chain, from, to);
            switch (rnd.nextInt(10)) {
                case 0, 1, 2, 3, 4 -> {
                    index.store(KEY, slot, part);
                    Set<Long> s = model.computeIfAbsent(slot, k -> new HashSet<>());
                    for (long h : part) {
                        if (s.size() < bound) {
                            s.add(h);
                        }
                    }
                }
                case 5, 6, 7 -> {
                    index.remove(slot, part);
                    Set<Long> s = model.get(slot);
                    if (s != null) {
                        for (long h : part) {
                            s.remove(h);
                        }
                    }
                }
                case 8 -> {
                    if (rnd.nextInt(10) == 0) {
                        index.clear(slot);
                        model.remove(slot);
                    }
                }
                default -> { }
            }
            check(index, model, chains);
        }
    }

    private static void check(BlockIndex index, Map<Integer, Set<Long>> model, List<long[]> chains) {
        for (int slot = 0; slot < SLOTS; slot++) {
            assertThat(index.blocks(slot)).as("blocks of slot %d", slot)
                    .isEqualTo(model.getOrDefault(slot, Set.of()).size());
        }
        for (long[] chain : chains) {
            int[] got = index.match(KEY, chain, SLOTS);
            for (int slot = 0; slot < SLOTS; slot++) {
                Set<Long> s = model.getOrDefault(slot, Set.of());
                int expected = 0;
                while (expected < chain.length && s.contains(chain[expected])) {
                    expected++;
                }
                assertThat(got[slot]).as("slot %d", slot).isEqualTo(expected);
            }
        }
        assertThat(index.match(new BlockIndex.Key("other", -1, 16), chains.get(0), SLOTS)).containsOnly(0);
    }
}
