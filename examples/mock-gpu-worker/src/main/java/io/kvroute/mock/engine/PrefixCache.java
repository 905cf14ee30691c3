package io.kvroute.mock.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import io.kvroute.protocol.PageHash;

/**
 * The engine's prefix cache: a radix tree over token ids whose edges are whole pages of
 * {@code pageSize} tokens (SGLang's paged radix cache; a page is the unit of matching, sharing and
 * eviction). Requests lock the path they matched while they run; unreferenced leaves are evicted
 * least-recently-used first.
 *
 * <p>Invariants: every node except the root holds exactly one page; {@code refCount >= 0}; a node
 * with a referenced descendant is referenced too (locks cover whole root paths); {@link
 * #cachedTokens} = pages x pageSize; {@link #referencedTokens} counts pages with refCount > 0.
 * Concurrency: engine thread only. Time is a logical tick (one per match or insert), not a clock.
 *
 * <p>KV events: with an event sink, each page keeps SGLang's chained page digest, new pages are
 * reported as one BlockStored chain per insert and evicted pages as one BlockRemoved per eviction
 * round, so a router can index exactly what this cache holds.
 *
 * <p>Eviction order is kept incrementally: {@code evictable} holds exactly the unreferenced leaves
 * ordered by last access, updated wherever a node's access tick, reference count or children change,
 * so one eviction costs O(pages evicted x log leaves) instead of a walk over the whole tree (the walk
 * was 85 % of a virtual-time trace replay's CPU once the pool was full: every step evicts).
 */
final class PrefixCache {

    private final int pageSize;
    private final Node root = new Node(null, null, -1);
    private long tick;
    private long numPages;
    private long numReferencedPages;
    /** Unreferenced non-root leaves, least recently used first (creation order breaks ties). */
    private final TreeSet<Node> evictable = new TreeSet<>(LRU);
    private long nextNodeId;
    private final PageHash hasher;
    /** Set once before the first request (engine start-up), read on the engine thread. */
    private volatile CacheEventSink sink;

    PrefixCache(int pageSize) {
        if (pageSize < 1) {
            throw new IllegalArgumentException("page-size must be >= 1: " + pageSize);
        }
        this.pageSize = pageSize;
        this.hasher = new PageHash(pageSize);
    }

    /** A locked match: release it with {@link #unlock} when the request ends. */
    static final class Match {
        final List<Node> path;
        final int cachedTokens;

        Match(List<Node> path, int cachedTokens) {
            this.path = path;
            this.cachedTokens = cachedTokens;
        }
    }

    /**
     * Finds the longest cached page-aligned prefix of {@code ids[0, maxTokens)} and locks it.
     */
    Match matchAndLock(int[] ids, int maxTokens) {
        tick++;
        List<Node> path = new ArrayList<>();
        Node node = root;
        int pos = 0;
        while (pos + pageSize <= maxTokens) {
            Node child = node.children == null ? null : node.children.get(new PageKey(ids, pos, pageSize));
            if (child == null) {
                break;
            }
            untrack(child);
            child.lastAccessTick = tick;
            if (child.refCount++ == 0) {
                numReferencedPages++;
            }
            path.add(child);
            node = child;
            pos += pageSize;
        }
        return new Match(path, pos);
    }

    void unlock(Match match) {
        for (Node n : match.path) {
            if (n.refCount <= 0) {
                throw new IllegalStateException("unlock of unreferenced page, refCount=" + n.refCount);
            }
            if (--n.refCount == 0) {
                numReferencedPages--;
                track(n);
            }
        }
    }

    /** Inserts the full pages of {@code ids[0, tokens)}; returns the tokens newly cached. */
    long insert(int[] ids, int tokens) {
        tick++;
        Node node = root;
        long added = 0;
        int firstNewPos = -1;
        Node beforeFirstNew = null;
        for (int pos = 0; pos + pageSize <= tokens; pos += pageSize) {
            PageKey key = new PageKey(ids, pos, pageSize);
            if (node.children == null) {
                node.children = new HashMap<>();
            }
            Node child = node.children.get(key);
            if (child == null) {
                untrack(node); // no longer a leaf
                child = new Node(node, key, nextNodeId++);
                if (sink != null) {
                    child.digest = hasher.digest(node.digest, ids, pos);
                    if (firstNewPos < 0) {
                        firstNewPos = pos;
                        beforeFirstNew = node;
                    }
                }
                node.children.put(key, child);
                numPages++;
                added += pageSize;
            }
            untrack(child);
            child.lastAccessTick = tick;
            track(child);
            node = child;
        }
        if (firstNewPos >= 0) {
            reportStored(ids, firstNewPos, (int) (added / pageSize), beforeFirstNew);
        }
        return added;
    }

    /** New pages are always a suffix of the walked path: once a page is missing, so are its descendants. */
    private void reportStored(int[] ids, int from, int pages, Node parent) {
        long[] hashes = new long[pages];
        Node n = parent;
        for (int p = 0; p < pages; p++) {
            n = n.children.get(new PageKey(ids, from + p * pageSize, pageSize));
            hashes[p] = PageHash.wireHash(n.digest);
        }
        sink.stored(hashes, parent == root ? null : PageHash.wireHash(parent.digest),
                Arrays.copyOfRange(ids, from, from + pages * pageSize), pageSize);
    }

    /**
     * Reports pages entering and leaving the cache to {@code eventSink} from now on (pages cached
     * before are not reported: set it before the first request). Engine thread only.
     */
    void setEventSink(CacheEventSink eventSink) {
        this.sink = eventSink;
        if (eventSink != null) {
            eventSink.cleared(); // the engine starts with an empty cache
        }
    }

    /**
     * Drops every page (SGLang's radix-cache {@code reset} behind {@code /flush_cache}) and reports
     * {@code cleared()}. Only while no page is locked: the caller checks that nothing runs.
     */
    void flush() {
        if (numReferencedPages != 0) {
            throw new IllegalStateException("flush with " + numReferencedPages + " locked pages");
        }
        root.children = null;
        evictable.clear();
        numPages = 0;
        if (sink != null) {
            sink.cleared();
        }
    }

    /** Evicts unreferenced leaves, least recently used first, until {@code tokens} are freed or none is left. */
    long evict(long tokens) {
        if (tokens <= 0) {
            return 0;
        }
        long freed = 0;
        List<Long> removed = sink == null ? null : new ArrayList<>();
        while (freed < tokens && !evictable.isEmpty()) {
            Node leaf = evictable.pollFirst();
            leaf.tracked = false;
            if (removed != null) {
                removed.add(PageHash.wireHash(leaf.digest));
            }
            Node parent = leaf.parent;
            parent.children.remove(leaf.key);
            numPages--;
            freed += pageSize;
            track(parent);
        }
        if (removed != null && !removed.isEmpty()) {
            sink.removed(removed.stream().mapToLong(Long::longValue).toArray());
        }
        return freed;
    }

    long cachedTokens() {
        return numPages * pageSize;
    }

    long referencedTokens() {
        return numReferencedPages * pageSize;
    }

    int pageSize() {
        return pageSize;
    }

    private static final Comparator<Node> LRU =
            Comparator.comparingLong((Node n) -> n.lastAccessTick).thenComparingLong(n -> n.id);

    /** Call before changing a node's access tick (the set is ordered by it) or when it stops being evictable. */
    private void untrack(Node n) {
        if (n.tracked) {
            evictable.remove(n);
            n.tracked = false;
        }
    }

    /** Adds {@code n} to the eviction order when it is an unreferenced non-root leaf. */
    private void track(Node n) {
        if (!n.tracked && n != root && n.refCount == 0 && (n.children == null || n.children.isEmpty())) {
            evictable.add(n);
            n.tracked = true;
        }
    }

    /** Unreferenced non-root leaves, least recently used first (for tests: the eviction order). */
    List<Node> evictionOrder() {
        return List.copyOf(evictable);
    }

    /** The same computed by walking the whole tree: the naive model {@link #evictionOrder} is tested against. */
    List<Node> evictionOrderByWalk() {
        List<Node> leaves = new ArrayList<>();
        java.util.ArrayDeque<Node> stack = new java.util.ArrayDeque<>();
        stack.push(root);
        while (!stack.isEmpty()) { // iterative: with small pages a long prompt makes a deep path
            Node node = stack.pop();
            if (node.children == null || node.children.isEmpty()) {
                if (node != root && node.refCount == 0) {
                    leaves.add(node);
                }
            } else {
                node.children.values().forEach(stack::push);
            }
        }
        leaves.sort(LRU);
        return leaves;
    }

    static final class Node {
        final Node parent;
        final PageKey key;
        /** Creation order: breaks access-tick ties in the eviction order. */
        final long id;
        /** Whether the node is in {@code evictable}. */
        boolean tracked;
        Map<PageKey, Node> children;
        int refCount;
        long lastAccessTick;
        /** SGLang's page digest (chained SHA-256), kept only while events are reported. */
        byte[] digest;

        Node(Node parent, PageKey key, long id) {
            this.parent = parent;
            this.key = key;
            this.id = id;
        }
    }

    /** One page of token ids, compared by content. */
    static final class PageKey {
        private final int[] tokens;
        private final int hash;

        PageKey(int[] ids, int from, int len) {
            this.tokens = Arrays.copyOfRange(ids, from, from + len);
            this.hash = Arrays.hashCode(tokens);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof PageKey other && other.hash == hash && Arrays.equals(other.tokens, tokens);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
