package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The structural invariants of {@link PrefixIndex}, in one place for the fuzz and unit tests, and
 * the expansion of the tree into the naive model's shape (every owned prefix with its ticks).
 */
final class PrefixIndexInvariants {
    private PrefixIndexInvariants() {}

    /** Fails with a description when any invariant of the tree is broken. */
    static void check(PrefixIndex index) {
        PrefixIndexStats stats = index.stats();
        index.inspect(root -> {
            long nodes = 0;
            long elements = 0;
            Map<String, Long> owned = new HashMap<>();
            ArrayDeque<Node> stack = new ArrayDeque<>();
            stack.push(root);
            while (!stack.isEmpty()) {
                Node n = stack.pop();
                assertThat(n.dead).as("reachable node marked dead").isFalse();
                checkChildren(n);
                if (n != root) {
                    nodes++;
                    elements += n.edgeLength;
                    assertThat(n.edgeLength).as("empty edge").isPositive();
                    assertThat(n.ownerCount).as("node without owners (unowned leaf or chain)").isPositive();
                    for (int i = 0; i < n.ownerCount; i++) {
                        owned.merge(index.workerName(n.ownerIdAt(i)), (long) n.edgeLength, Long::sum);
                    }
                    if (n.kidCount == 1) {
                        assertThat(n.sameOwners(n.kidAt(0)))
                                .as("mergeable single-child chain at depth node of length %d", n.edgeLength)
                                .isFalse();
                    }
                    if (n.parent != root) {
                        for (int i = 0; i < n.ownerCount; i++) {
                            int id = n.ownerIdAt(i);
                            assertThat(n.parent.owns(id)).as("ownership not prefix-closed").isTrue();
                            assertThat(n.parent.tickOf(id)).as("ancestor older than descendant")
                                    .isGreaterThanOrEqualTo(n.ownerTickAt(i));
                        }
                    }
                }
                for (int i = 0; i < n.kidCount; i++) {
                    stack.push(n.kidAt(i));
                }
            }
            assertThat(stats.nodes()).as("node count").isEqualTo(nodes);
            assertThat(stats.elements()).as("element count = sum of edges").isEqualTo(elements);
            for (Map.Entry<String, Long> e : stats.ownedElementsByWorker().entrySet()) {
                assertThat(e.getValue()).as("owned elements of %s", e.getKey())
                        .isEqualTo(owned.getOrDefault(e.getKey(), 0L));
            }
            assertThat(stats.ownedElementsByWorker().keySet()).containsAll(owned.keySet());
            return null;
        });
    }

    private static void checkChildren(Node n) {
        for (int i = 0; i < n.kidCount; i++) {
            Node kid = n.kidAt(i);
            assertThat(kid.parent).as("parent link").isSameAs(n);
            assertThat(n.kidKeyAt(i)).as("child key is the child's first element").isEqualTo(kid.firstElement());
            if (i > 0) {
                assertThat(n.kidKeyAt(i)).as("children sorted and distinct").isGreaterThan(n.kidKeyAt(i - 1));
            }
        }
    }

    /** Every owned prefix of the tree with its owners' ticks (only for small trees). */
    static Map<String, Map<String, Long>> expand(PrefixIndex index) {
        return index.inspect(root -> {
            Map<String, Map<String, Long>> out = new HashMap<>();
            ArrayDeque<Node> nodes = new ArrayDeque<>();
            ArrayDeque<int[]> prefixes = new ArrayDeque<>();
            nodes.push(root);
            prefixes.push(new int[0]);
            while (!nodes.isEmpty()) {
                Node n = nodes.pop();
                int[] prefix = prefixes.pop();
                if (n != root) {
                    int[] full = Arrays.copyOf(prefix, prefix.length + n.edgeLength);
                    n.copyEdgeTo(full, prefix.length);
                    Map<String, Long> owners = new HashMap<>();
                    for (int i = 0; i < n.ownerCount; i++) {
                        owners.put(index.workerName(n.ownerIdAt(i)), n.ownerTickAt(i));
                    }
                    for (int len = prefix.length + 1; len <= full.length; len++) {
                        out.put(toList(full, len), owners);
                    }
                    prefix = full;
                }
                for (int i = 0; i < n.kidCount; i++) {
                    nodes.push(n.kidAt(i));
                    prefixes.push(prefix);
                }
            }
            return out;
        });
    }

    /** A prefix as a map key: two chars per element, so the parent is {@code substring(0, len - 2)}. */
    static String toList(int[] key, int length) {
        char[] out = new char[length * 2];
        for (int i = 0; i < length; i++) {
            out[2 * i] = (char) (key[i] >>> 16);
            out[2 * i + 1] = (char) key[i];
        }
        return new String(out);
    }
}
