package io.kvroute.router.prefix;

import static java.util.Objects.requireNonNull;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Which workers hold which key prefixes: a compressed radix tree over int keys with per-node
 * {@code worker -> last access tick}, per-worker capacity and a global node cap.
 *
 * <p>Follows LightLLM's compressed prompt-cache tree (seed 004): long edges stored and compared
 * whole, split at a divergence or at an insert's end; one clock read per insert; character-level
 * leaf-to-root LRU with trimming of partial leaf edges; no recursion anywhere.
 *
 * <p>Invariants (checked by {@code PrefixIndexInvariants} in the tests):
 * <ul>
 *   <li>Ownership is prefix-closed: a worker owning a node owns all its ancestors, and every node
 *       records one tick per owner for all elements of its edge. So a worker's matched depth is the
 *       end of the deepest matched node it owns, and its ticks never grow towards the leaves.</li>
 *   <li>Every non-root node has an owner (so every leaf is owned).</li>
 *   <li>Canonical shape: no non-root node has exactly one child with the very same owners and
 *       ticks; such a pair is merged (after a full-path refresh, an eviction or a removal), so an
 *       append-only chat stays one edge.</li>
 *   <li>{@code elements} = sum of edge lengths; a worker's owned elements = sum of the edge
 *       lengths of the nodes it owns.</li>
 * </ul>
 *
 * <p>Concurrency: thread-safe. One {@link ReentrantLock} guards the tree. Critical sections are a
 * single walk (a few hundred ns for a 1,536,000-char prompt sampled every 512 chars): key building
 * and result assembly stay outside the lock. Why not striping or optimistic reads: most prompts of a
 * fleet share their first elements (system prompt), so striping by first element serializes on one
 * stripe anyway; an optimistic reader would need immutable, copy-on-write nodes, costing an
 * allocation per touched node on every insert. See docs/prefix-index.md for the measurements.
 */
public final class PrefixIndex {
    private final PrefixIndexConfig config;
    private final LongSupplier ticks;
    private final ReentrantLock lock = new ReentrantLock();

    // All fields below are guarded by lock.
    private final Node root = new Node(null, 0, 0);
    private final Map<String, Integer> idByWorker = new HashMap<>();
    private String[] workerById = new String[8];
    private long[] ownedById = new long[8];
    private long[] capacityById = new long[8];
    private final ArrayDeque<Integer> freeIds = new ArrayDeque<>();
    private int nextId;
    private long nodeCount;
    private long elementCount;
    private long lastTick = Long.MIN_VALUE;
    /** Bumped on every change of shape (split, merge, new or removed node, trimmed edge). */
    private long structureVersion;
    private long evictedElements;
    private long evictedNodes;
    private final Map<String, Long> capacityOverrides = new HashMap<>();
    private final ArrayList<Node> path = new ArrayList<>();

    public PrefixIndex(PrefixIndexConfig config, LongSupplier ticks) {
        this.config = requireNonNull(config, "config");
        this.ticks = requireNonNull(ticks, "ticks");
    }

    // ================================================================ match

    /** One walk along the key; reads ownership, never changes it. */
    public PrefixMatch match(int[] key) {
        requireNonNull(key, "key");
        String[] names;
        int[] depths;
        PrefixMatch.WalkHint hint;
        lock.lock();
        try {
            Node first = null;
            int[] depthById = null;
            Node[] full = new Node[8];
            int fullCount = 0;
            int fullDepth = 0;
            int pos = 0;
            int keyLength = key.length;
            Node n = root;
            while (pos < keyLength) {
                Node c = n.child(key[pos]);
                if (c == null) {
                    break;
                }
                int len = c.edgeLength;
                int m = len == 1 ? 1 // single-element edge: the child lookup already matched it
                        : 1 + c.commonLength(1, key, pos + 1, Math.min(len, keyLength - pos) - 1);
                pos += m;
                if (first == null) {
                    first = c;
                    depthById = new int[nextId];
                }
                int[] ids = c.ownerIds;
                for (int i = 0, k = c.ownerCount; i < k; i++) {
                    depthById[ids[i]] = pos; // prefix closure: deeper nodes overwrite
                }
                if (m < len) {
                    break;
                }
                if (fullCount == full.length) {
                    full = Arrays.copyOf(full, fullCount * 2);
                }
                full[fullCount++] = c;
                fullDepth = pos;
                n = c;
            }
            hint = new PrefixMatch.WalkHint(this, structureVersion, key, full, fullCount, fullDepth);
            if (first == null) {
                return new PrefixMatch(keyLength, new String[0], new int[0], hint);
            }
            // Owners of the first matched node are a superset of every deeper node's owners.
            names = new String[first.ownerCount];
            depths = new int[first.ownerCount];
            for (int i = 0; i < first.ownerCount; i++) {
                int id = first.ownerIds[i];
                names[i] = workerById[id];
                depths[i] = depthById[id];
            }
        } finally {
            lock.unlock();
        }
        return new PrefixMatch(key.length, names, depths, hint);
    }

    // ================================================================ insert

    /** Records that the worker holds the whole key, with one clock read as its access tick. */
    public void insert(int[] key, String workerId) {
        requireNonNull(key, "key");
        requireNonNull(workerId, "workerId");
        if (key.length == 0) {
            return;
        }
        lock.lock();
        try {
            long tick = Math.max(ticks.getAsLong(), lastTick); // LRU needs a monotone clock
            lastTick = tick;
            int id = idFor(workerId);
            insertLocked(key, id, tick, root, 0);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records that the worker holds the key of {@code match}, reusing that match's walk when the
     * tree has not changed shape since (no element is compared again); otherwise walks afresh.
     * The matched key array must not have been modified in between. One clock read.
     */
    public void insertMatched(PrefixMatch match, String workerId) {
        requireNonNull(match, "match");
        requireNonNull(workerId, "workerId");
        PrefixMatch.WalkHint hint = match.hint();
        int[] key = hint.key();
        if (key.length == 0) {
            return;
        }
        lock.lock();
        try {
            long tick = Math.max(ticks.getAsLong(), lastTick);
            lastTick = tick;
            int id = idFor(workerId);
            if (hint.index() != this || hint.structureVersion() != structureVersion) {
                insertLocked(key, id, tick, root, 0);
                return;
            }
            ArrayList<Node> p = path;
            p.clear();
            Node[] full = hint.fullPath();
            for (int i = 0; i < hint.fullPathSize(); i++) {
                Node c = full[i];
                if (c.touch(id, tick)) {
                    ownedById[id] += c.edgeLength;
                }
                p.add(c);
            }
            Node start = hint.fullPathSize() == 0 ? root : full[hint.fullPathSize() - 1];
            insertLocked(key, id, tick, start, hint.fullDepth());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Walks from {@code n} at depth {@code pos} (the nodes above already touched and in
     * {@link #path}, or {@code n} is the root and the path empty), touching, splitting and adding
     * a leaf as needed, then restores the canonical shape and enforces the limits.
     */
    private void insertLocked(int[] key, int id, long tick, Node n, int pos) {
        {
            ArrayList<Node> p = path;
            if (n == root) {
                p.clear();
            }
            int keyLength = key.length;
            while (pos < keyLength) {
                Node c = n.child(key[pos]);
                if (c == null) {
                    Node leaf = new Node(Node.copyEdge(key, pos, keyLength), 0, keyLength - pos);
                    leaf.touch(id, tick);
                    n.addKid(leaf);
                    structureVersion++;
                    nodeCount++;
                    elementCount += leaf.edgeLength;
                    ownedById[id] += leaf.edgeLength;
                    p.add(leaf);
                    break;
                }
                int len = c.edgeLength;
                int m = len == 1 ? 1
                        : 1 + c.commonLength(1, key, pos + 1, Math.min(len, keyLength - pos) - 1);
                if (m < len) {
                    split(c, m);
                }
                if (c.touch(id, tick)) {
                    ownedById[id] += m;
                }
                p.add(c);
                pos += m;
                n = c;
            }
            // Restore the canonical shape along the refreshed path, bottom-up.
            Node last = p.get(p.size() - 1);
            mergeWithOnlyChild(last);
            for (int i = p.size() - 1; i >= 1; i--) {
                mergeWithOnlyChild(p.get(i - 1));
            }
            p.clear();
            enforceCapacity(id);
            enforceNodeCap();
        }
    }

    /** Splits {@code c} after {@code at} elements; {@code c} keeps the top, a new child the rest. */
    private void split(Node c, int at) {
        Node bottom = new Node(c.edge, c.edgeOffset + at, c.edgeLength - at);
        bottom.copyOwnersFrom(c);
        bottom.kids = c.kids;
        bottom.kidKeys = c.kidKeys;
        bottom.kidCount = c.kidCount;
        for (int i = 0; i < bottom.kidCount; i++) {
            bottom.kids[i].parent = bottom;
        }
        c.kids = new Node[2];
        c.kidKeys = new int[2];
        c.kidCount = 0;
        c.edgeLength = at;
        c.addKid(bottom);
        structureVersion++;
        nodeCount++;
    }

    /**
     * Merges {@code n}'s only child into {@code n} when both carry the same owners and ticks.
     * Returns true when merged (the child is then dead).
     */
    private boolean mergeWithOnlyChild(Node n) {
        if (n == root || n.kidCount != 1) {
            return false;
        }
        Node c = n.kids[0];
        if (!n.sameOwners(c)) {
            return false;
        }
        n.appendEdge(c);
        n.kids = c.kids;
        n.kidKeys = c.kidKeys;
        n.kidCount = c.kidCount;
        for (int i = 0; i < n.kidCount; i++) {
            n.kids[i].parent = n;
        }
        c.dead = true;
        structureVersion++;
        nodeCount--;
        return true;
    }

    /** Detaches an ownerless leaf and restores the canonical shape around its parent. */
    private void detachLeaf(Node leaf) {
        if (leaf.kidCount != 0) {
            throw new IllegalStateException("detaching a node with " + leaf.kidCount + " children");
        }
        Node parent = leaf.parent;
        parent.removeKid(leaf);
        leaf.dead = true;
        structureVersion++;
        nodeCount--;
        elementCount -= leaf.edgeLength;
        mergeWithOnlyChild(parent);
    }

    // ================================================================ eviction

    private record Candidate(long tick, Node node) {}

    private void enforceCapacity(int id) {
        long excess = ownedById[id] - capacityById[id];
        if (excess > 0) {
            evictWorker(id, excess);
        }
    }

    /**
     * Removes {@code excess} of the worker's elements, oldest tick first, from the leaves of its
     * owned subtree upwards, trimming the last leaf edge partially. Character-level LRU: within an
     * edge all elements share a tick, and ancestors are never older than their descendants.
     */
    private void evictWorker(int id, long excess) {
        PriorityQueue<Candidate> heap = new PriorityQueue<>((a, b) -> Long.compare(a.tick, b.tick));
        ArrayDeque<Node> stack = new ArrayDeque<>();
        for (int i = 0; i < root.kidCount; i++) {
            if (root.kids[i].owns(id)) {
                stack.push(root.kids[i]);
            }
        }
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            boolean leaf = true;
            for (int i = 0; i < n.kidCount; i++) {
                if (n.kids[i].owns(id)) {
                    stack.push(n.kids[i]);
                    leaf = false;
                }
            }
            if (leaf) {
                heap.add(new Candidate(n.tickOf(id), n));
            }
        }
        while (excess > 0 && !heap.isEmpty()) {
            Node n = heap.poll().node;
            if (n.dead || !n.owns(id) || n.anyKidOwnedBy(id)) {
                continue;
            }
            if (n.edgeLength > excess) { // trim the bottom of this leaf edge
                int keep = (int) (n.edgeLength - excess);
                if (n.ownerCount == 1) { // only this worker: no children (every node is owned)
                    elementCount -= n.edgeLength - keep;
                    n.truncateEdge(keep);
                    structureVersion++;
                } else {
                    split(n, keep);
                    if (n.kidCount != 1) {
                        throw new IllegalStateException("split left " + n.kidCount + " children");
                    }
                    Node bottom = n.kids[0];
                    bottom.dropOwner(id); // still owned by the others: they own n's children

                    mergeWithOnlyChild(bottom);
                }
                ownedById[id] -= excess;
                evictedElements += excess;
                excess = 0;
                break;
            }
            int len = n.edgeLength;
            Node parent = n.parent;
            n.dropOwner(id);
            ownedById[id] -= len;
            evictedElements += len;
            excess -= len;
            if (n.ownerCount == 0) {
                evictedNodes++;
                detachLeaf(n); // may merge parent's remaining only child into parent
            } else {
                mergeWithOnlyChild(n); // its only child, owned by others, may now look the same
            }
            if (parent != root && !parent.dead && parent.owns(id) && !parent.anyKidOwnedBy(id)) {
                heap.add(new Candidate(parent.tickOf(id), parent));
            }
        }
    }

    /** Removes whole leaves, oldest newest-tick first, until the node count is within the cap. */
    private void enforceNodeCap() {
        if (nodeCount <= config.maxNodes()) {
            return;
        }
        PriorityQueue<Candidate> heap = new PriorityQueue<>((a, b) -> Long.compare(a.tick, b.tick));
        ArrayDeque<Node> stack = new ArrayDeque<>();
        stack.push(root);
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            if (n.kidCount == 0 && n != root) {
                heap.add(new Candidate(n.newestTick(), n));
            }
            for (int i = 0; i < n.kidCount; i++) {
                stack.push(n.kids[i]);
            }
        }
        while (nodeCount > config.maxNodes() && !heap.isEmpty()) {
            Node n = heap.poll().node;
            if (n.dead || n.kidCount != 0) {
                continue;
            }
            for (int i = 0; i < n.ownerCount; i++) {
                ownedById[n.ownerIds[i]] -= n.edgeLength;
                evictedElements += n.edgeLength;
            }
            n.ownerCount = 0;
            evictedNodes++;
            Node parent = n.parent;
            detachLeaf(n);
            if (parent != root && parent.kidCount == 0 && !parent.dead) {
                heap.add(new Candidate(parent.newestTick(), parent));
            }
        }
    }

    // ================================================================ workers

    /** Forgets the worker everywhere (it left the fleet) and prunes what nobody else owns. */
    public void removeWorker(String workerId) {
        requireNonNull(workerId, "workerId");
        lock.lock();
        try {
            Integer boxed = idByWorker.remove(workerId);
            if (boxed == null) {
                return;
            }
            int id = boxed;
            // Iterative post-order over the worker's owned subtree: children before parents.
            ArrayList<Node> order = new ArrayList<>();
            ArrayDeque<Node> stack = new ArrayDeque<>();
            for (int i = 0; i < root.kidCount; i++) {
                if (root.kids[i].owns(id)) {
                    stack.push(root.kids[i]);
                }
            }
            while (!stack.isEmpty()) {
                Node n = stack.pop();
                order.add(n);
                for (int i = 0; i < n.kidCount; i++) {
                    if (n.kids[i].owns(id)) {
                        stack.push(n.kids[i]);
                    }
                }
            }
            for (int i = order.size() - 1; i >= 0; i--) { // reverse pre-order: children first
                Node n = order.get(i);
                if (n.dead) { // merged into its parent by an earlier sibling's detach
                    continue;
                }
                n.dropOwner(id);
                if (n.ownerCount == 0) {
                    detachLeaf(n);
                } else {
                    mergeWithOnlyChild(n);
                }
            }
            workerById[id] = null;
            ownedById[id] = 0;
            capacityById[id] = 0;
            freeIds.push(id);
        } finally {
            lock.unlock();
        }
    }

    /** Overrides the per-worker capacity (key elements) and evicts down to it at once. */
    public void setWorkerCapacity(String workerId, long maxElements) {
        requireNonNull(workerId, "workerId");
        if (maxElements < 0) {
            throw new IllegalArgumentException("maxElements must be >= 0, got " + maxElements);
        }
        lock.lock();
        try {
            capacityOverrides.put(workerId, maxElements);
            Integer id = idByWorker.get(workerId);
            if (id != null) {
                capacityById[id] = maxElements;
                enforceCapacity(id);
            }
        } finally {
            lock.unlock();
        }
    }

    private int idFor(String workerId) {
        Integer known = idByWorker.get(workerId);
        if (known != null) {
            return known;
        }
        int id = freeIds.isEmpty() ? nextId++ : freeIds.pop();
        if (id >= workerById.length) {
            int cap = workerById.length * 2;
            workerById = Arrays.copyOf(workerById, cap);
            ownedById = Arrays.copyOf(ownedById, cap);
            capacityById = Arrays.copyOf(capacityById, cap);
        }
        workerById[id] = workerId;
        ownedById[id] = 0;
        capacityById[id] = capacityOverrides.getOrDefault(workerId, config.perWorkerCapacityElements());
        idByWorker.put(workerId, id);
        return id;
    }

    // ================================================================ stats

    public PrefixIndexStats stats() {
        lock.lock();
        try {
            Map<String, Long> owned = new LinkedHashMap<>();
            for (Map.Entry<String, Integer> e : idByWorker.entrySet()) {
                owned.put(e.getKey(), ownedById[e.getValue()]);
            }
            return new PrefixIndexStats(nodeCount, elementCount, owned, evictedElements, evictedNodes);
        } finally {
            lock.unlock();
        }
    }

    /** For tests in this package: runs {@code visitor} on the root under the lock. */
    <T> T inspect(java.util.function.Function<Node, T> visitor) {
        lock.lock();
        try {
            return visitor.apply(root);
        } finally {
            lock.unlock();
        }
    }

    /** For tests: the name of a worker id seen in a node. */
    String workerName(int id) {
        return workerById[id];
    }
}
