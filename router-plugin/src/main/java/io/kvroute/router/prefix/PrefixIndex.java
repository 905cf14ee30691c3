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
 * {@code worker -> last access tick}, per-worker capacity, a global node cap and a global bound on
 * its estimated bytes (across all workers, {@link PrefixIndexConfig#maxBytes}).
 *
 * <p>Follows LightLLM's compressed prompt-cache tree
 * ({@code lightllm/server/httpserver_for_pd_master/pd_selector/prompt_cache_tree.py}): long edges stored and compared
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
 * walk plus ownership updates; key building and result assembly stay outside the lock. Edge
 * compares of {@value #UNLOCKED_COMPARE_MIN_ELEMENTS}+ elements (128k-token keys) run with the
 * lock released: edge arrays are never written after creation (splits share them, merges and
 * compaction copy), so a captured {@code (array, offset, length)} slice stays valid to read, and
 * the walk is accepted only if the structure version is unchanged when the lock is re-taken
 * (otherwise it restarts; after three restarts it compares under the lock). Ownership is read in
 * one final critical section, so a match is the state at one instant; an insert reads its tick
 * after its unlocked compares, so ticks still follow the serial order of the critical sections.
 * Why not striping: most prompts of a fleet share their first elements (system prompt), so
 * striping by first element serializes on one stripe anyway. See docs/prefix-index.md.
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
        this(config, ticks, UNLOCKED_COMPARE_MIN_ELEMENTS);
    }

    /** For tests: a low threshold sends nearly every compare through the unlocked path. */
    PrefixIndex(PrefixIndexConfig config, LongSupplier ticks, int unlockedCompareMinElements) {
        this.config = requireNonNull(config, "config");
        this.ticks = requireNonNull(ticks, "ticks");
        if (unlockedCompareMinElements < 1) {
            throw new IllegalArgumentException("unlockedCompareMinElements must be >= 1");
        }
        this.unlockedCompareMinElements = unlockedCompareMinElements;
    }

    // ================================================================ match

    /**
     * Edge compares of at least this many elements run outside the lock, validated afterwards by
     * the structure version (edge arrays are never written after creation, so the captured slice
     * is safe to read). Short compares stay under the lock: releasing and re-acquiring it costs
     * more than comparing a few thousand elements.
     */
    static final int UNLOCKED_COMPARE_MIN_ELEMENTS = 4_096;
    private final int unlockedCompareMinElements;
    /** For tests: runs inside every unlocked compare window (lock not held), e.g. to race a split. */
    Runnable unlockedCompareHook;
    /** Optimistic walks restarted by a concurrent change of shape before comparing under the lock. */
    private static final int OPTIMISTIC_ATTEMPTS = 3;

    /**
     * Result of {@link #walkLocked}: the first matched node (full or partial; null when nothing
     * matched), the deepest fully matched node (null when none; the others are its ancestors, reached
     * through {@code parent}, so no per-level path array is built) ending at {@code fullDepth}, and
     * the partially matched node with its matched end.
     */
    private record Walk(Node first, Node lastFull, int fullDepth, Node partial, int partialEnd) {}

    /**
     * One walk along the key, with the lock held on entry and on exit. Long edge compares release
     * the lock (see {@link #UNLOCKED_COMPARE_MIN_ELEMENTS}); if the tree changed shape meanwhile the
     * walk restarts, and after {@link #OPTIMISTIC_ATTEMPTS} restarts it compares under the lock. On
     * return the walk is valid for the current {@link #structureVersion}. Must be entered with a
     * lock hold count of 1 and with {@link #path} unused.
     */
    private Walk walkLocked(PrefixKey key) {
        int[] keyInts = key.ints;
        int keyLength = keyInts.length;
        int attempts = 0;
        while (true) {
            long version = structureVersion;
            Node first = null;
            Node lastFull = null;
            int fullDepth = 0;
            int pos = 0;
            Node n = root;
            boolean restart = false;
            while (pos < keyLength) {
                Node c = n.child(keyInts[pos]);
                if (c == null) {
                    break;
                }
                int len = c.edgeLength;
                int max = Math.min(len, keyLength - pos) - 1;
                int m;
                if (len == 1) {
                    m = 1; // single-element edge: the child lookup already matched it
                } else if (max >= unlockedCompareMinElements && attempts < OPTIMISTIC_ATTEMPTS) {
                    Object edge = c.edge;
                    int edgeFrom = c.edgeOffset + 1;
                    int common;
                    lock.unlock();
                    try {
                        Runnable hook = unlockedCompareHook;
                        if (hook != null) {
                            hook.run();
                        }
                        common = Node.commonLength(edge, edgeFrom, key, pos + 1, max);
                    } finally {
                        lock.lock();
                    }
                    if (structureVersion != version) {
                        attempts++;
                        restart = true;
                        break;
                    }
                    m = 1 + common;
                } else {
                    m = 1 + c.commonLength(1, key, pos + 1, max);
                }
                pos += m;
                if (first == null) {
                    first = c;
                }
                if (m < len) {
                    return new Walk(first, lastFull, fullDepth, c, pos);
                }
                lastFull = c;
                fullDepth = pos;
                n = c;
            }
            if (!restart) {
                return new Walk(first, lastFull, fullDepth, null, 0);
            }
        }
    }

    /**
     * One walk along the key; reads ownership, never changes it. The ownership read happens in one
     * critical section at the end of the walk, so the result is the state at one instant.
     */
    public PrefixMatch match(int[] key) {
        requireNonNull(key, "key");
        return match(PrefixKey.wrap(key));
    }

    /** As {@link #match(int[])}; a key with a byte form compares byte edges vectorized. */
    public PrefixMatch match(PrefixKey key) {
        requireNonNull(key, "key");
        int[] keyInts = key.ints;
        String[] names;
        int[] depths;
        long[] lastTicks;
        PrefixMatch.WalkHint hint;
        lock.lock();
        try {
            Walk w = walkLocked(key);
            hint = new PrefixMatch.WalkHint(this, structureVersion, key, w.lastFull(),
                    w.fullDepth(), w.partial(), w.partialEnd());
            Node first = w.first();
            if (first == null) {
                return new PrefixMatch(keyInts.length, new String[0], new int[0], new long[0], hint);
            }
            // Owners of the first matched node are a superset of every deeper node's owners
            // (prefix closure), and a worker's depth is the end of the deepest matched node it
            // owns. So read bottom-up and stop once every owner of the first node has its depth:
            // usually after a few nodes, not the whole path. Depth 0 marks "not seen yet" (every
            // matched node ends at depth >= 1).
            int[] depthById = new int[nextId];
            long[] tickById = new long[nextId];
            int wanted = first.ownerCount;
            int seen = 0;
            Node partial = w.partial();
            if (partial != null) {
                seen += recordDepths(partial, w.partialEnd(), depthById, tickById);
            }
            int end = w.fullDepth();
            for (Node c = w.lastFull(); c != root && seen < wanted; c = c.parent) {
                seen += recordDepths(c, end, depthById, tickById);
                end -= c.edgeLength;
            }
            names = new String[wanted];
            depths = new int[wanted];
            lastTicks = new long[wanted];
            for (int i = 0; i < wanted; i++) {
                int id = first.ownerIdAt(i);
                names[i] = workerById[id];
                depths[i] = depthById[id];
                lastTicks[i] = tickById[id];
            }
        } finally {
            lock.unlock();
        }
        return new PrefixMatch(keyInts.length, names, depths, lastTicks, hint);
    }

    /**
     * Sets {@code end}, and the owner's tick on this node, for the node's owners without a depth yet;
     * returns how many were new.
     */
    private static int recordDepths(Node c, int end, int[] depthById, long[] tickById) {
        int added = 0;
        for (int i = 0, k = c.ownerCount; i < k; i++) {
            int id = c.ownerIdAt(i);
            if (depthById[id] == 0) {
                depthById[id] = end;
                tickById[id] = c.ownerTickAt(i);
                added++;
            }
        }
        return added;
    }

    // ================================================================ insert

    /** Records that the worker holds the whole key, with one clock read as its access tick. */
    public void insert(int[] key, String workerId) {
        requireNonNull(key, "key");
        insert(PrefixKey.wrap(key), workerId);
    }

    /** As {@link #insert(int[], String)}; a key with a byte form compares byte edges vectorized. */
    public void insert(PrefixKey key, String workerId) {
        requireNonNull(key, "key");
        requireNonNull(workerId, "workerId");
        int[] keyInts = key.ints;
        if (keyInts.length == 0) {
            return;
        }
        lock.lock();
        try {
            if (keyInts.length > unlockedCompareMinElements) {
                insertAlong(walkLocked(key), key, workerId); // long compares outside the lock
            } else {
                long tick = Math.max(ticks.getAsLong(), lastTick); // LRU needs a monotone clock
                lastTick = tick;
                int id = idFor(workerId);
                insertLocked(key, id, tick, root, 0, null, 0, null);
            }
        } finally {
            lock.unlock();
        }
    }

    /** True when {@code match} came from this index (so {@link #insertMatched} can reuse its walk). */
    public boolean produced(PrefixMatch match) {
        return requireNonNull(match, "match").hint().index() == this;
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
        PrefixKey key = hint.key();
        if (key.ints.length == 0) {
            return;
        }
        lock.lock();
        try {
            if (hint.index() == this && hint.structureVersion() == structureVersion) {
                insertAlong(new Walk(null, hint.lastFull(), hint.fullDepth(), hint.partial(),
                        hint.partialEnd()), key, workerId);
            } else if (key.ints.length > unlockedCompareMinElements) {
                insertAlong(walkLocked(key), key, workerId);
            } else {
                long tick = Math.max(ticks.getAsLong(), lastTick);
                lastTick = tick;
                insertLocked(key, idFor(workerId), tick, root, 0, null, 0, null);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Inserts along a walk valid for the current structure version: continues below its deepest
     * fully matched node (reusing the partial node's compare), then touches the fully matched nodes
     * bottom-up through their parent links, merging each with its only child where canonical shape
     * asks for it. Reads the clock here, after any unlocked compare, so ticks follow the order of
     * the critical sections.
     */
    private void insertAlong(Walk w, PrefixKey key, String workerId) {
        long tick = Math.max(ticks.getAsLong(), lastTick); // LRU needs a monotone clock
        lastTick = tick;
        int id = idFor(workerId);
        Node lastFull = w.lastFull();
        if (lastFull == null) {
            insertLocked(key, id, tick, root, 0, w.partial(), w.partialEnd(), null);
        } else {
            insertLocked(key, id, tick, lastFull, w.fullDepth(), w.partial(), w.partialEnd(),
                    lastFull);
        }
    }

    /**
     * Walks from {@code n} at depth {@code pos}, touching, splitting and adding a leaf as needed,
     * then restores the canonical shape bottom-up and enforces the limits. {@code n} is the root,
     * or the deepest node of a valid walk's fully matched path ({@code fullPathEnd == n}), whose
     * nodes are touched here after the part below them, climbing the parent links (one pass that
     * touches and merges; merges only fold a node's child into it, so the links above stay valid).
     * When {@code partial} is met, its matched end {@code partialEnd} is known from a valid walk
     * and its edge is not compared again.
     */
    private void insertLocked(PrefixKey key, int id, long tick, Node n, int pos, Node partial,
            int partialEnd, Node fullPathEnd) {
        {
            ArrayList<Node> p = path;
            p.clear();
            int[] keyInts = key.ints;
            int keyLength = keyInts.length;
            while (pos < keyLength) {
                Node c = n.child(keyInts[pos]);
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
                int m = c == partial ? partialEnd - pos
                        : len == 1 ? 1
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
            for (int i = p.size() - 1; i >= 0; i--) {
                mergeWithOnlyChild(p.get(i));
            }
            p.clear();
            for (Node c = fullPathEnd; c != null && c != root; c = c.parent) {
                if (c.touch(id, tick)) {
                    ownedById[id] += c.edgeLength;
                }
                mergeWithOnlyChild(c);
            }
            enforceCapacity(id);
            enforceGlobalCaps();
        }
    }

    /** Splits {@code c} after {@code at} elements; {@code c} keeps the top, a new child the rest. */
    private void split(Node c, int at) {
        Node bottom = new Node(c.edge, c.edgeOffset + at, c.edgeLength - at);
        bottom.copyOwnersFrom(c);
        bottom.takeKidsFrom(c);
        c.clearKids();
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
        Node c = n.kid0;
        if (!n.sameOwners(c)) {
            return false;
        }
        n.appendEdge(c);
        n.takeKidsFrom(c);
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
            if (root.kidAt(i).owns(id)) {
                stack.push(root.kidAt(i));
            }
        }
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            boolean leaf = true;
            for (int i = 0; i < n.kidCount; i++) {
                if (n.kidAt(i).owns(id)) {
                    stack.push(n.kidAt(i));
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
                    Node bottom = n.kid0;
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

    /**
     * Removes whole leaves, oldest newest-tick first and whoever owns them, until the node count is
     * within its cap and, when the estimated bytes were over {@link PrefixIndexConfig#maxBytes},
     * until they are at most its low-water mark. One tree scan per call: the low-water slack makes
     * byte eviction a batch, not a scan per insert.
     */
    private void enforceGlobalCaps() {
        boolean overBytes = estimatedBytesLocked() > config.maxBytes();
        if (nodeCount <= config.maxNodes() && !overBytes) {
            return;
        }
        long byteTarget = overBytes ? config.bytesLowWater() : config.maxBytes();
        PriorityQueue<Candidate> heap = new PriorityQueue<>((a, b) -> Long.compare(a.tick, b.tick));
        ArrayDeque<Node> stack = new ArrayDeque<>();
        stack.push(root);
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            if (n.kidCount == 0 && n != root) {
                heap.add(new Candidate(n.newestTick(), n));
            }
            for (int i = 0; i < n.kidCount; i++) {
                stack.push(n.kidAt(i));
            }
        }
        while ((nodeCount > config.maxNodes() || estimatedBytesLocked() > byteTarget) && !heap.isEmpty()) {
            Node n = heap.poll().node;
            if (n.dead || n.kidCount != 0) {
                continue;
            }
            for (int i = 0; i < n.ownerCount; i++) {
                ownedById[n.ownerIdAt(i)] -= n.edgeLength;
                evictedElements += n.edgeLength;
            }
            n.clearOwners();
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
                if (root.kidAt(i).owns(id)) {
                    stack.push(root.kidAt(i));
                }
            }
            while (!stack.isEmpty()) {
                Node n = stack.pop();
                order.add(n);
                for (int i = 0; i < n.kidCount; i++) {
                    if (n.kidAt(i).owns(id)) {
                        stack.push(n.kidAt(i));
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
                enforceGlobalCaps(); // a partial trim may split a shared edge: one more node
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
            return new PrefixIndexStats(nodeCount, elementCount, owned, evictedElements, evictedNodes,
                    estimatedBytesLocked());
        } finally {
            lock.unlock();
        }
    }

    private long estimatedBytesLocked() {
        return PrefixIndexConfig.estimatedBytes(elementCount, nodeCount);
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
