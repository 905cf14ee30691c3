package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A node's owner table (an array of (id, tick) pairs plus the last-touched owner kept in fields)
 * against a plain map, over random touches, drops, copies and clears.
 */
class NodeOwnersTest {
    @Test
    void randomOwnerOperations_matchAPlainMap() {
        SplittableRandom rnd = new SplittableRandom(0x0e11_0001L);
        for (int sequence = 0; sequence < 2_000; sequence++) {
            Node node = new Node(new byte[] {1}, 0, 1);
            Map<Integer, Long> model = new HashMap<>();
            long tick = 0;
            for (int op = 0; op < 40; op++) {
                int id = rnd.nextInt(6);
                int kind = rnd.nextInt(10);
                if (kind < 6) {
                    tick++;
                    boolean added = node.touch(id, tick);
                    assertThat(added).isEqualTo(model.put(id, tick) == null);
                } else if (kind < 8) {
                    assertThat(node.dropOwner(id)).isEqualTo(model.remove(id) != null);
                } else if (kind < 9) {
                    Node copy = new Node(new byte[] {1}, 0, 1);
                    copy.copyOwnersFrom(node);
                    assertSame(copy, model);
                    assertThat(copy.sameOwners(node)).isTrue();
                    node = copy;
                } else if (rnd.nextInt(8) == 0) {
                    node.clearOwners();
                    model.clear();
                }
                assertSame(node, model);
            }
        }
    }

    @Test
    void sameOwners_comparesTheHotTickNotTheStaleSlot() {
        Node a = new Node(new byte[] {1}, 0, 1);
        Node b = new Node(new byte[] {2}, 0, 1);
        a.touch(0, 5);
        a.touch(1, 6);
        a.touch(0, 7); // slot of 0 now stale in a, its tick lives in the node fields
        b.touch(1, 6);
        b.touch(0, 7);
        assertThat(a.sameOwners(b)).isTrue();
        b.touch(0, 8);
        assertThat(a.sameOwners(b)).isFalse();
        assertThat(b.newestTick()).isEqualTo(8);
    }

    private static void assertSame(Node node, Map<Integer, Long> model) {
        assertThat(node.ownerCount).isEqualTo(model.size());
        Map<Integer, Long> actual = new HashMap<>();
        for (int i = 0; i < node.ownerCount; i++) {
            actual.put(node.ownerIdAt(i), node.ownerTickAt(i));
        }
        assertThat(actual).isEqualTo(model);
        for (int id = 0; id < 6; id++) {
            assertThat(node.owns(id)).isEqualTo(model.containsKey(id));
            assertThat(node.tickOf(id)).isEqualTo(model.getOrDefault(id, Long.MIN_VALUE));
        }
        long newest = model.values().stream().mapToLong(Long::longValue).max().orElse(Long.MIN_VALUE);
        assertThat(node.newestTick()).isEqualTo(newest);
    }
}
