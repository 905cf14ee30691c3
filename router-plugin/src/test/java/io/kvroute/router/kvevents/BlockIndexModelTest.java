package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The index against a naive model: per (table, slot) a plain set of block hashes, and a match is
 * the number of leading hashes of a chain the slot holds. The hashes form a forest as an engine's
 * chained hashes do (chains share prefixes; a hash always has the same parent), and the events are
 * what engines send plus what they should not: chains stored from any block with the parent stated
 * (often one the slot lacks), removals of middle ranges and single blocks, AllBlocksCleared, two
 * tables, more slots than one mask word, and enough blocks to grow the table. Chains branch off a
 * few trunks at a few blocks and most events go to a few slots, so blocks get three or more
 * children in a slot and the sticky-count (unknown) path runs too. Checked after every
 * operation and after random revalidations; invariants in {@link #check}: matches equal the model
 * for every slot (so a slot searched while holding a hole would fail), a clean slot is prefix-closed
 * in the model, and the tracked orphan count is the model's whenever it is not unknown.
 */
class BlockIndexModelTest {
    private static final BlockIndex.Key[] KEYS = {new BlockIndex.Key("m", -1, 16), new BlockIndex.Key("m", 7, 16)};
    private static final int SLOTS = 70;
    /** Most events go to a few slots (in both mask words), so their sets get deep and branchy. */
    private static final int[] HOT_SLOTS = {0, 1, 64, 69};

    @Test
    void randomOperations_matchANaiveModel() {
        for (long seed = 1; seed <= 8; seed++) {
            new Run(new SplittableRandom(seed), Integer.MAX_VALUE).go(1500);
        }
    }

    @Test
    void perSlotBound_refusesStoresBeyondIt_likeTheModelWithTheSameBound() {
        new Run(new SplittableRandom(42), 25).go(1500);
    }

    private static final class Run {
        final SplittableRandom rnd;
        final int bound;
        final BlockIndex index;
        final Map<Long, Long> parentOf = new HashMap<>(); // absent value = root
        final List<long[]> chains = new ArrayList<>();
        final List<long[]> queries = new ArrayList<>();
        final List<Map<Integer, Set<Long>>> model = List.of(new HashMap<>(), new HashMap<>());
        final List<Long> universe = new ArrayList<>();

        Run(SplittableRandom rnd, int bound) {
            this.rnd = rnd;
            this.bound = bound;
            this.index = new BlockIndex(bound);
            for (int c = 0; c < 40; c++) {
                long[] chain = new long[1 + rnd.nextInt(80)];
                // the first chains are trunks; the rest mostly branch off a trunk at one of a few
                // blocks, so a block gets several children (and sticky counts happen)
                long[] earlier = c > 0 ? chains.get(c < 4 ? rnd.nextInt(c) : rnd.nextInt(4)) : new long[0];
                int shared = rnd.nextInt(4) != 0 ? Math.min(earlier.length, 1 + 5 * rnd.nextInt(4)) : 0;
                for (int i = 0; i < chain.length; i++) {
                    // chains share prefixes, as conversations sharing a system prompt do
                    chain[i] = i < shared ? earlier[i] : rnd.nextLong();
                    if (i >= shared) {
                        if (i > 0) {
                            parentOf.put(chain[i], chain[i - 1]);
                        }
                        universe.add(chain[i]);
                    }
                }
                chains.add(chain);
                queries.add(chain);
                long[] diverging = Arrays.copyOf(chain, chain.length + 3); // ends in blocks nobody stores
                for (int i = chain.length; i < diverging.length; i++) {
                    diverging[i] = rnd.nextLong();
                }
                queries.add(diverging);
            }
        }

        void go(int ops) {
            for (int op = 0; op < ops; op++) {
                int slot = rnd.nextInt(3) == 0 ? rnd.nextInt(SLOTS) : HOT_SLOTS[rnd.nextInt(HOT_SLOTS.length)];
                int t = rnd.nextInt(KEYS.length);
                long[] chain = chains.get(rnd.nextInt(chains.size()));
                int from = rnd.nextInt(chain.length);
                int to = from + 1 + rnd.nextInt(chain.length - from);
                long[] part = Arrays.copyOfRange(chain, from, to);
                int kind = rnd.nextInt(100);
                if (kind < 45) {
                    // from a random block: the stated parent is often one the slot lacks
                    if (from == 0) {
                        index.store(KEYS[t], slot, part);
                    } else {
                        index.store(KEYS[t], slot, true, chain[from - 1], part);
                    }
                    for (long h : part) {
                        if (total(slot) < bound) {
                            set(t, slot).add(h);
                        }
                    }
                } else if (kind < 60) {
                    // a tail removal, as an engine evicts: keeps the slot prefix-closed
                    long[] tail = Arrays.copyOfRange(chain, from, chain.length);
                    reverse(tail);
                    remove(slot, tail);
                } else if (kind < 80) {
                    remove(slot, part); // a middle range, root side first
                } else if (kind < 88) {
                    remove(slot, new long[] {universe.get(rnd.nextInt(universe.size()))});
                } else if (kind < 90) {
                    index.clear(slot);
                    for (Map<Integer, Set<Long>> m : model) {
                        m.remove(slot);
                    }
                } else if (kind < 94) {
                    index.revalidate();
                    check(true);
                    continue;
                }
                check(false);
            }
            index.revalidate();
            check(true);
        }

        void remove(int slot, long[] hashes) {
            index.remove(slot, hashes);
            for (Map<Integer, Set<Long>> m : model) {
                Set<Long> s = m.get(slot);
                if (s != null) {
                    for (long h : hashes) {
                        s.remove(h);
                    }
                }
            }
        }

        Set<Long> set(int t, int slot) {
            return model.get(t).computeIfAbsent(slot, k -> new HashSet<>());
        }

        int total(int slot) {
            int n = 0;
            for (Map<Integer, Set<Long>> m : model) {
                n += m.getOrDefault(slot, Set.of()).size();
            }
            return n;
        }

        /** Held blocks of the slot whose parent it does not hold. */
        int orphans(Set<Long> held) {
            int n = 0;
            for (long h : held) {
                Long p = parentOf.get(h);
                if (p != null && !held.contains(p)) {
                    n++;
                }
            }
            return n;
        }

        void check(boolean revalidated) {
            for (int slot = 0; slot < SLOTS; slot++) {
                assertThat(index.blocks(slot)).as("blocks of slot %d", slot).isEqualTo(total(slot));
            }
            for (int t = 0; t < KEYS.length; t++) {
                BlockTable table = index.table(KEYS[t]);
                for (int slot = 0; table != null && slot < SLOTS; slot++) {
                    int modelOrphans = orphans(model.get(t).getOrDefault(slot, Set.of()));
                    if (table.isClean(slot)) {
                        assertThat(modelOrphans).as("table %d slot %d is clean but has holes", t, slot).isZero();
                    }
                    if (!table.unknown(slot)) {
                        assertThat(table.orphans(slot)).as("orphans of table %d slot %d", t, slot)
                                .isEqualTo(modelOrphans);
                        assertThat(table.isClean(slot)).as("table %d slot %d clean", t, slot).isEqualTo(modelOrphans == 0);
                    }
                    if (revalidated) {
                        assertThat(table.unknown(slot)).as("table %d slot %d unknown after revalidation", t, slot).isFalse();
                    }
                }
                for (int qi = 0; qi < queries.size(); qi++) {
                    long[] q = queries.get(qi);
                    int[] got = index.match(KEYS[t], q, SLOTS);
                    int[] expected = new int[SLOTS];
                    for (int slot = 0; slot < SLOTS; slot++) {
                        Set<Long> s = model.get(t).getOrDefault(slot, Set.of());
                        while (expected[slot] < q.length && s.contains(q[expected[slot]])) {
                            expected[slot]++;
                        }
                    }
                    if (!Arrays.equals(got, expected)) {
                        fail("table %d query %d (%d blocks)%nexpected %s%n     got %s", t, qi, q.length,
                                Arrays.toString(expected), Arrays.toString(got));
                    }
                }
            }
            assertThat(index.match(new BlockIndex.Key("other", -1, 16), chains.get(0), SLOTS)).containsOnly(0);
        }
    }

    private static void reverse(long[] a) {
        for (int i = 0, j = a.length - 1; i < j; i++, j--) {
            long x = a[i];
            a[i] = a[j];
            a[j] = x;
        }
    }
}
