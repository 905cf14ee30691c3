package io.kvroute.router.prefix;

import java.util.Arrays;

/**
 * One node of the compressed radix tree: an edge (a run of key elements), its children keyed by
 * their first element, and the owners of every element of the edge with their last access tick.
 *
 * <p>Edge storage is a slice {@code [edgeOffset, edgeOffset + edgeLength)} of either a
 * {@code byte[]} (every element in 0..255, i.e. ASCII/Latin-1 sampled text: a quarter of the
 * memory, which keeps the 64-branch tree under 200 KB) or an {@code int[]} (token ids, any code
 * point). Splitting shares the array between the two halves, so a split never copies.
 *
 * <p>Not thread-safe: every access happens under {@link PrefixIndex}'s lock.
 */
final class Node {
    private static final Node[] NO_KIDS = new Node[0];
    private static final int[] NO_INTS = new int[0];
    private static final long[] NO_LONGS = new long[0];

    Object edge;          // byte[] or int[]; null for the root
    int edgeOffset;
    int edgeLength;
    Node parent;

    int[] kidKeys = NO_INTS; // sorted first elements of the children
    Node[] kids = NO_KIDS;
    int kidCount;

    int[] ownerIds = NO_INTS; // worker ids, unsorted
    long[] ownerTicks = NO_LONGS;
    int ownerCount;

    boolean dead;         // set once detached or merged away; lets eviction heaps skip stale entries

    Node(Object edge, int edgeOffset, int edgeLength) {
        this.edge = edge;
        this.edgeOffset = edgeOffset;
        this.edgeLength = edgeLength;
    }

    // ---------------------------------------------------------------- edge

    /** Copies {@code key[from, to)} into the narrowest storage that holds every element. */
    static Object copyEdge(int[] key, int from, int to) {
        for (int i = from; i < to; i++) {
            if ((key[i] & ~0xFF) != 0) {
                return Arrays.copyOfRange(key, from, to);
            }
        }
        byte[] bytes = new byte[to - from];
        for (int i = from; i < to; i++) {
            bytes[i - from] = (byte) key[i];
        }
        return bytes;
    }

    int elementAt(int index) {
        Object e = edge;
        if (e instanceof byte[]) {
            return ((byte[]) e)[edgeOffset + index] & 0xFF;
        }
        return ((int[]) e)[edgeOffset + index];
    }

    int firstElement() {
        return elementAt(0);
    }

    /**
     * Number of leading equal elements of {@code edge[from, from + max)} and {@code key[keyFrom,
     * keyFrom + max)}. int edges use the vectorized {@link Arrays#mismatch}; byte edges a plain
     * loop (no vectorized int-vs-byte compare exists in the JDK).
     */
    int commonLength(int from, int[] key, int keyFrom, int max) {
        Object e = edge;
        int eo = edgeOffset + from;
        if (e instanceof int[]) {
            int m = Arrays.mismatch((int[]) e, eo, eo + max, key, keyFrom, keyFrom + max);
            return m < 0 ? max : m;
        }
        byte[] b = (byte[]) e;
        int i = 0;
        // Eight elements per branch (OR of XORs) instead of one per element. Not A/B-measured
        // separately; the loop is the hot part of PrefixPathBench.fullMatch.
        while (i + 8 <= max) {
            int o = eo + i;
            int k = keyFrom + i;
            int diff = ((b[o] & 0xFF) ^ key[k]) | ((b[o + 1] & 0xFF) ^ key[k + 1])
                    | ((b[o + 2] & 0xFF) ^ key[k + 2]) | ((b[o + 3] & 0xFF) ^ key[k + 3])
                    | ((b[o + 4] & 0xFF) ^ key[k + 4]) | ((b[o + 5] & 0xFF) ^ key[k + 5])
                    | ((b[o + 6] & 0xFF) ^ key[k + 6]) | ((b[o + 7] & 0xFF) ^ key[k + 7]);
            if (diff != 0) {
                break;
            }
            i += 8;
        }
        while (i < max && (b[eo + i] & 0xFF) == key[keyFrom + i]) {
            i++;
        }
        return i;
    }

    /** Appends the expanded edge to {@code out} starting at {@code at}; used by tests and merges. */
    void copyEdgeTo(int[] out, int at) {
        Object e = edge;
        if (e instanceof int[]) {
            System.arraycopy((int[]) e, edgeOffset, out, at, edgeLength);
        } else {
            byte[] b = (byte[]) e;
            for (int i = 0; i < edgeLength; i++) {
                out[at + i] = b[edgeOffset + i] & 0xFF;
            }
        }
    }

    /** Replaces this edge with this edge followed by {@code tail}'s edge, in fresh storage. */
    void appendEdge(Node tail) {
        int total = edgeLength + tail.edgeLength;
        if (edge instanceof byte[] && tail.edge instanceof byte[]) {
            byte[] out = new byte[total];
            System.arraycopy((byte[]) edge, edgeOffset, out, 0, edgeLength);
            System.arraycopy((byte[]) tail.edge, tail.edgeOffset, out, edgeLength, tail.edgeLength);
            edge = out;
        } else {
            int[] out = new int[total];
            copyEdgeTo(out, 0);
            tail.copyEdgeTo(out, edgeLength);
            edge = out;
        }
        edgeOffset = 0;
        edgeLength = total;
    }

    /** Shortens the edge to its first {@code newLength} elements, compacting a mostly unused array. */
    void truncateEdge(int newLength) {
        edgeLength = newLength;
        int capacity = edge instanceof byte[] ? ((byte[]) edge).length : ((int[]) edge).length;
        if (newLength * 4 < capacity) {
            if (edge instanceof byte[]) {
                edge = Arrays.copyOfRange((byte[]) edge, edgeOffset, edgeOffset + newLength);
            } else {
                edge = Arrays.copyOfRange((int[]) edge, edgeOffset, edgeOffset + newLength);
            }
            edgeOffset = 0;
        }
    }

    // ---------------------------------------------------------------- children

    Node child(int firstElement) {
        int i = findKid(firstElement);
        return i >= 0 ? kids[i] : null;
    }

    private int findKid(int k) {
        int[] keys = kidKeys;
        int n = kidCount;
        if (n <= 8) { // linear scan beats binary search on tiny arrays
            for (int i = 0; i < n; i++) {
                if (keys[i] == k) {
                    return i;
                }
            }
            return -1;
        }
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int v = keys[mid];
            if (v < k) {
                lo = mid + 1;
            } else if (v > k) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    void addKid(Node kid) {
        int k = kid.firstElement();
        int pos = 0;
        while (pos < kidCount && kidKeys[pos] < k) { // children stay sorted for binary search
            pos++;
        }
        if (kidCount == kids.length) {
            int cap = Math.max(2, kidCount * 2);
            kids = Arrays.copyOf(kids, cap);
            kidKeys = Arrays.copyOf(kidKeys, cap);
        }
        System.arraycopy(kids, pos, kids, pos + 1, kidCount - pos);
        System.arraycopy(kidKeys, pos, kidKeys, pos + 1, kidCount - pos);
        kids[pos] = kid;
        kidKeys[pos] = k;
        kidCount++;
        kid.parent = this;
    }

    void removeKid(Node kid) {
        int i = findKid(kid.firstElement());
        if (i < 0 || kids[i] != kid) {
            throw new IllegalStateException("node is not a child of its parent");
        }
        System.arraycopy(kids, i + 1, kids, i, kidCount - i - 1);
        System.arraycopy(kidKeys, i + 1, kidKeys, i, kidCount - i - 1);
        kidCount--;
        kids[kidCount] = null;
    }

    /** Replaces the child whose first element equals {@code replacement}'s (same slot). */
    void replaceKid(Node replacement) {
        int i = findKid(replacement.firstElement());
        kids[i] = replacement;
        replacement.parent = this;
    }

    // ---------------------------------------------------------------- owners

    int ownerIndex(int workerId) {
        int[] ids = ownerIds;
        for (int i = 0, n = ownerCount; i < n; i++) {
            if (ids[i] == workerId) {
                return i;
            }
        }
        return -1;
    }

    boolean owns(int workerId) {
        return ownerIndex(workerId) >= 0;
    }

    long tickOf(int workerId) {
        int i = ownerIndex(workerId);
        return i < 0 ? Long.MIN_VALUE : ownerTicks[i];
    }

    /** Sets the tick; returns true when the worker was not an owner before. */
    boolean touch(int workerId, long tick) {
        int i = ownerIndex(workerId);
        if (i >= 0) {
            ownerTicks[i] = tick;
            return false;
        }
        if (ownerCount == ownerIds.length) {
            int cap = Math.max(2, ownerCount * 2);
            ownerIds = Arrays.copyOf(ownerIds, cap);
            ownerTicks = Arrays.copyOf(ownerTicks, cap);
        }
        ownerIds[ownerCount] = workerId;
        ownerTicks[ownerCount] = tick;
        ownerCount++;
        return true;
    }

    boolean dropOwner(int workerId) {
        int i = ownerIndex(workerId);
        if (i < 0) {
            return false;
        }
        ownerCount--;
        ownerIds[i] = ownerIds[ownerCount];
        ownerTicks[i] = ownerTicks[ownerCount];
        return true;
    }

    long newestTick() {
        long max = Long.MIN_VALUE;
        for (int i = 0; i < ownerCount; i++) {
            max = Math.max(max, ownerTicks[i]);
        }
        return max;
    }

    boolean sameOwners(Node other) {
        if (ownerCount != other.ownerCount) {
            return false;
        }
        for (int i = 0; i < ownerCount; i++) {
            int j = other.ownerIndex(ownerIds[i]);
            if (j < 0 || other.ownerTicks[j] != ownerTicks[i]) {
                return false;
            }
        }
        return true;
    }

    void copyOwnersFrom(Node other) {
        ownerIds = Arrays.copyOf(other.ownerIds, Math.max(other.ownerCount, 1));
        ownerTicks = Arrays.copyOf(other.ownerTicks, Math.max(other.ownerCount, 1));
        ownerCount = other.ownerCount;
    }

    /** True when some child is owned by the worker (its owned path continues below this node). */
    boolean anyKidOwnedBy(int workerId) {
        for (int i = 0; i < kidCount; i++) {
            if (kids[i].owns(workerId)) {
                return true;
            }
        }
        return false;
    }
}
