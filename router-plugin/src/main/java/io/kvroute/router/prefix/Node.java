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
 * <p>Layout for the branch-dense case (every level a two-child node, a walk is pointer chasing):
 * up to two children live in fields of the node, so a child lookup reads only this node; owners
 * are one array of {@code (id, tick)} pairs, so a touch is one array load.
 *
 * <p>Not thread-safe: every field access happens under {@link PrefixIndex}'s lock. The one
 * exception is the content of an edge array, which is never written after the array is filled
 * (split shares it, merge and compaction copy into a fresh array): {@link PrefixIndex} compares
 * long edges against a slice captured under the lock after releasing it.
 */
final class Node {
    private static final long[] NO_LONGS = new long[0];

    Object edge;          // byte[] or int[]; null for the root
    int edgeOffset;
    int edgeLength;
    Node parent;

    // Children, sorted by first element. Up to INLINE_KIDS of them live in the fields kid0/kid1
    // (kids/kidKeys null); above that all of them live in the arrays (kid0/kid1 null).
    static final int INLINE_KIDS = 2;
    int kidCount;
    int kid0Key;
    int kid1Key;
    Node kid0;
    Node kid1;
    int[] kidKeys;
    Node[] kids;

    // Owners packed in one array: owners[2i] = worker id, owners[2i + 1] = its last access tick
    // (unsorted). One array instead of ids + ticks saves a dependent load per touched node.
    long[] owners = NO_LONGS;
    int ownerCount;
    // The owner touched last, with its tick, in fields of the node: its slot in owners holds a
    // stale tick, hotTick is the real one (-1 = none). A worker re-inserting a path it owns (the
    // common case: the same prompt prefix routed to the same worker) refreshes every node of the
    // path, and this way the refresh writes the node it is already reading instead of loading the
    // owners array as well.
    int hotOwner = -1;
    long hotTick;

    boolean dead;         // set once detached or merged away; lets eviction heaps skip stale entries

    Node(Object edge, int edgeOffset, int edgeLength) {
        this.edge = edge;
        this.edgeOffset = edgeOffset;
        this.edgeLength = edgeLength;
    }

    // ---------------------------------------------------------------- edge

    /** Copies {@code key[from, to)} into the narrowest storage that holds every element. */
    static Object copyEdge(PrefixKey key, int from, int to) {
        if (key.bytes != null) { // every element of the key is in 0..255
            return Arrays.copyOfRange(key.bytes, from, to);
        }
        int[] ints = key.ints;
        for (int i = from; i < to; i++) {
            if ((ints[i] & ~0xFF) != 0) {
                return Arrays.copyOfRange(ints, from, to);
            }
        }
        byte[] bytes = new byte[to - from];
        for (int i = from; i < to; i++) {
            bytes[i - from] = (byte) ints[i];
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
     * keyFrom + max)}. int edges use the vectorized {@link Arrays#mismatch}; byte edges too when
     * the key has a byte form (every element in 0..255: sampled ASCII/Latin-1 text), else a plain
     * loop (no vectorized int-vs-byte compare exists in the JDK).
     */
    int commonLength(int from, PrefixKey k, int keyFrom, int max) {
        return commonLength(edge, edgeOffset + from, k, keyFrom, max);
    }

    /** As {@link #commonLength(int, PrefixKey, int, int)} on an explicit edge slice (no field reads). */
    static int commonLength(Object e, int eo, PrefixKey keyForms, int keyFrom, int max) {
        int[] key = keyForms.ints;
        if (e instanceof int[]) {
            int m = Arrays.mismatch((int[]) e, eo, eo + max, key, keyFrom, keyFrom + max);
            return m < 0 ? max : m;
        }
        byte[] b = (byte[]) e;
        if (keyForms.bytes != null) {
            // Vectorized byte compare: PrefixPathBench.fullMatch (1,024 elements) 0.60 us with
            // the int key (scalar loop below) vs 0.10 us with a PrefixKey's byte form (quick JMH
            // run, load ~9; full figures in docs/benchmarks-tree.md).
            int m = Arrays.mismatch(b, eo, eo + max, keyForms.bytes, keyFrom, keyFrom + max);
            return m < 0 ? max : m;
        }
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

    /** The {@code i}-th child in key order, {@code 0 <= i < kidCount}. */
    Node kidAt(int i) {
        if (kidCount <= INLINE_KIDS) {
            return i == 0 ? kid0 : kid1;
        }
        return kids[i];
    }

    /** The first element of the {@code i}-th child (its key in this node). */
    int kidKeyAt(int i) {
        if (kidCount <= INLINE_KIDS) {
            return i == 0 ? kid0Key : kid1Key;
        }
        return kidKeys[i];
    }

    /**
     * The child whose edge starts with {@code firstElement}, or null. Up to two children this is
     * one or two compares on fields of this node (no dependent array loads): in the branch-dense
     * tree every level is a node with two children, so this is the hot lookup.
     */
    Node child(int firstElement) {
        int n = kidCount;
        if (n <= INLINE_KIDS) {
            if (n > 0 && kid0Key == firstElement) {
                return kid0;
            }
            if (n > 1 && kid1Key == firstElement) {
                return kid1;
            }
            return null;
        }
        int i = findKid(kidKeys, n, firstElement);
        return i >= 0 ? kids[i] : null;
    }

    private static int findKid(int[] keys, int n, int k) {
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
        kid.parent = this;
        int n = kidCount;
        if (n == 0) {
            kid0 = kid;
            kid0Key = k;
        } else if (n == 1) {
            if (k > kid0Key) {
                kid1 = kid;
                kid1Key = k;
            } else {
                kid1 = kid0;
                kid1Key = kid0Key;
                kid0 = kid;
                kid0Key = k;
            }
        } else if (n == INLINE_KIDS) { // spill the inline pair and the new child to arrays
            Node[] ks = new Node[4];
            int[] keys = new int[4];
            ks[0] = kid0;
            keys[0] = kid0Key;
            ks[1] = kid1;
            keys[1] = kid1Key;
            kid0 = null;
            kid1 = null;
            kids = ks;
            kidKeys = keys;
            insertIntoArrays(kid, k, 2);
        } else {
            insertIntoArrays(kid, k, n);
        }
        kidCount = n + 1;
    }

    private void insertIntoArrays(Node kid, int k, int n) {
        int pos = 0;
        while (pos < n && kidKeys[pos] < k) { // children stay sorted for binary search
            pos++;
        }
        if (n == kids.length) {
            kids = Arrays.copyOf(kids, n * 2);
            kidKeys = Arrays.copyOf(kidKeys, n * 2);
        }
        System.arraycopy(kids, pos, kids, pos + 1, n - pos);
        System.arraycopy(kidKeys, pos, kidKeys, pos + 1, n - pos);
        kids[pos] = kid;
        kidKeys[pos] = k;
    }

    void removeKid(Node kid) {
        int n = kidCount;
        if (n <= INLINE_KIDS) {
            if (n > 0 && kid0 == kid) {
                kid0 = kid1;
                kid0Key = kid1Key;
                kid1 = null;
            } else if (n > 1 && kid1 == kid) {
                kid1 = null;
            } else {
                throw new IllegalStateException("node is not a child of its parent");
            }
            kidCount = n - 1;
            return;
        }
        int i = findKid(kidKeys, n, kid.firstElement());
        if (i < 0 || kids[i] != kid) {
            throw new IllegalStateException("node is not a child of its parent");
        }
        System.arraycopy(kids, i + 1, kids, i, n - i - 1);
        System.arraycopy(kidKeys, i + 1, kidKeys, i, n - i - 1);
        n--;
        kids[n] = null;
        kidCount = n;
        if (n == INLINE_KIDS) { // back to the inline form
            kid0 = kids[0];
            kid0Key = kidKeys[0];
            kid1 = kids[1];
            kid1Key = kidKeys[1];
            kids = null;
            kidKeys = null;
        }
    }

    /** Takes over all of {@code other}'s children (re-parenting them); {@code other} keeps stale links. */
    void takeKidsFrom(Node other) {
        kid0 = other.kid0;
        kid0Key = other.kid0Key;
        kid1 = other.kid1;
        kid1Key = other.kid1Key;
        kids = other.kids;
        kidKeys = other.kidKeys;
        kidCount = other.kidCount;
        for (int i = 0; i < kidCount; i++) {
            kidAt(i).parent = this;
        }
    }

    /** Drops all children (the caller re-attaches them elsewhere). */
    void clearKids() {
        kid0 = null;
        kid1 = null;
        kids = null;
        kidKeys = null;
        kidCount = 0;
    }

    // ---------------------------------------------------------------- owners

    int ownerIdAt(int i) {
        return (int) owners[2 * i];
    }

    long ownerTickAt(int i) {
        int id = (int) owners[2 * i];
        return id == hotOwner ? hotTick : owners[2 * i + 1];
    }

    /** Slot of the worker in {@link #owners} (even index), or -1. */
    private int ownerSlot(int workerId) {
        long[] o = owners;
        for (int i = 0, end = 2 * ownerCount; i < end; i += 2) {
            if (o[i] == workerId) {
                return i;
            }
        }
        return -1;
    }

    boolean owns(int workerId) {
        return workerId == hotOwner || ownerSlot(workerId) >= 0;
    }

    long tickOf(int workerId) {
        if (workerId == hotOwner) {
            return hotTick;
        }
        int s = ownerSlot(workerId);
        return s < 0 ? Long.MIN_VALUE : owners[s + 1];
    }

    /**
     * Sets the tick; returns true when the worker was not an owner before. The hot owner's touch
     * reads and writes only this node; another worker's moves the hot tick back into its slot.
     */
    boolean touch(int workerId, long tick) {
        if (workerId == hotOwner) {
            hotTick = tick;
            return false;
        }
        long[] o = owners;
        int end = 2 * ownerCount;
        int hot = hotOwner;
        boolean added = true;
        for (int i = 0; i < end; i += 2) {
            if (o[i] == hot) {
                o[i + 1] = hotTick;
            } else if (o[i] == workerId) {
                added = false;
            }
        }
        if (added) {
            if (end == o.length) {
                o = Arrays.copyOf(o, Math.max(4, end * 2));
                owners = o;
            }
            o[end] = workerId;
            ownerCount++;
        }
        hotOwner = workerId;
        hotTick = tick;
        return added;
    }

    boolean dropOwner(int workerId) {
        int s = ownerSlot(workerId);
        if (s < 0) {
            return false;
        }
        if (workerId == hotOwner) {
            hotOwner = -1;
        }
        ownerCount--;
        int last = 2 * ownerCount;
        owners[s] = owners[last];
        owners[s + 1] = owners[last + 1];
        return true;
    }

    /** Forgets every owner (the node is about to be detached). */
    void clearOwners() {
        ownerCount = 0;
        hotOwner = -1;
    }

    long newestTick() {
        long max = Long.MIN_VALUE;
        for (int i = 0; i < ownerCount; i++) {
            max = Math.max(max, ownerTickAt(i));
        }
        return max;
    }

    boolean sameOwners(Node other) {
        if (ownerCount != other.ownerCount) {
            return false;
        }
        for (int i = 0; i < ownerCount; i++) {
            int id = ownerIdAt(i);
            if (!other.owns(id) || other.tickOf(id) != ownerTickAt(i)) {
                return false;
            }
        }
        return true;
    }

    void copyOwnersFrom(Node other) {
        owners = Arrays.copyOf(other.owners, Math.max(2 * other.ownerCount, 2));
        ownerCount = other.ownerCount;
        hotOwner = other.hotOwner;
        hotTick = other.hotTick;
    }

    /** True when some child is owned by the worker (its owned path continues below this node). */
    boolean anyKidOwnedBy(int workerId) {
        for (int i = 0; i < kidCount; i++) {
            if (kidAt(i).owns(workerId)) {
                return true;
            }
        }
        return false;
    }
}
