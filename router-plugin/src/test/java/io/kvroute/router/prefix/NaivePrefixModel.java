package io.kvroute.router.prefix;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Uncompressed reference model of {@link PrefixIndex}: every owned prefix, one entry per key
 * element, with {@code worker -> tick}. Eviction works one element at a time (character-level LRU);
 * node counts are derived from the canonical compressed shape of this map.
 */
final class NaivePrefixModel {
    final Map<String, Map<String, Long>> positions = new HashMap<>();
    private final long defaultCapacity;
    private final int maxNodes;
    private final PrefixIndexConfig config;
    private final Map<String, Long> capacities = new HashMap<>();
    long evictedElements;

    NaivePrefixModel(PrefixIndexConfig config) {
        this.defaultCapacity = config.perWorkerCapacityElements();
        this.maxNodes = config.maxNodes();
        this.config = config;
    }

    void insert(int[] key, String worker, long tick) {
        for (int len = 1; len <= key.length; len++) {
            positions.computeIfAbsent(PrefixIndexInvariants.toList(key, len), k -> new HashMap<>())
                    .put(worker, tick);
        }
        if (key.length > 0) {
            evictWorker(worker);
            evictNodes();
        }
    }

    Map<String, Integer> match(int[] key) {
        Map<String, Integer> out = new HashMap<>();
        for (int len = 1; len <= key.length; len++) {
            Map<String, Long> owners = positions.get(PrefixIndexInvariants.toList(key, len));
            if (owners == null) {
                break;
            }
            for (String w : owners.keySet()) {
                out.put(w, len);
            }
        }
        return out;
    }

    void setCapacity(String worker, long capacity) {
        capacities.put(worker, capacity);
        evictWorker(worker);
        evictNodes();
    }

    void removeWorker(String worker) {
        positions.values().forEach(m -> m.remove(worker));
        positions.values().removeIf(Map::isEmpty);
    }

    long owned(String worker) {
        return positions.values().stream().filter(m -> m.containsKey(worker)).count();
    }

    long elements() {
        return positions.size();
    }

    private void evictWorker(String worker) {
        long capacity = capacities.getOrDefault(worker, defaultCapacity);
        long owned = owned(worker);
        while (owned > capacity) {
            Map<String, List<String>> kids = children();
            String victim = null;
            long oldest = Long.MAX_VALUE;
            for (Map.Entry<String, Map<String, Long>> e : positions.entrySet()) {
                Long tick = e.getValue().get(worker);
                if (tick == null || tick >= oldest) {
                    continue;
                }
                boolean leaf = kids.getOrDefault(e.getKey(), List.of()).stream()
                        .noneMatch(k -> positions.get(k).containsKey(worker));
                if (leaf) {
                    victim = e.getKey();
                    oldest = tick;
                }
            }
            Map<String, Long> owners = positions.get(victim);
            owners.remove(worker);
            if (owners.isEmpty()) {
                positions.remove(victim);
            }
            owned--;
            evictedElements++;
        }
    }

    /** Estimated bytes, computed independently of the index: 4 per element, 128 per node. */
    long bytes() {
        return 4 * elements() + 128 * nodes();
    }

    /**
     * Whole canonical leaves, oldest newest-tick first, whoever owns them: until the node cap holds
     * and, when over the byte bound, down to 7/8 of it.
     */
    private void evictNodes() {
        long maxBytes = config.maxBytes();
        long byteTarget = bytes() > maxBytes ? maxBytes - maxBytes / 8 : maxBytes;
        while (nodes() > maxNodes || bytes() > byteTarget) {
            Map<String, List<String>> kids = children();
            List<String> victimChain = null;
            long oldest = Long.MAX_VALUE;
            for (String p : positions.keySet()) {
                if (kids.containsKey(p)) {
                    continue;
                }
                List<String> chain = new ArrayList<>();
                String cur = p;
                chain.add(cur);
                while (cur.length() > 2) {
                    String up = cur.substring(0, cur.length() - 2);
                    if (kids.get(up).size() != 1 || !positions.get(up).equals(positions.get(cur))) {
                        break;
                    }
                    cur = up;
                    chain.add(cur);
                }
                long newest = Collections.max(positions.get(p).values());
                if (newest < oldest) {
                    oldest = newest;
                    victimChain = chain;
                }
            }
            for (String p : victimChain) {
                evictedElements += positions.remove(p).size();
            }
        }
    }

    /** Nodes of the canonical compressed tree: positions where an edge must end. */
    long nodes() {
        Map<String, List<String>> kids = children();
        long count = 0;
        for (Map.Entry<String, Map<String, Long>> e : positions.entrySet()) {
            List<String> k = kids.getOrDefault(e.getKey(), List.of());
            if (k.size() != 1 || !positions.get(k.get(0)).equals(e.getValue())) {
                count++;
            }
        }
        return count;
    }

    private Map<String, List<String>> children() {
        Map<String, List<String>> kids = new HashMap<>();
        for (String p : positions.keySet()) {
            if (p.length() > 2) {
                kids.computeIfAbsent(p.substring(0, p.length() - 2), k -> new ArrayList<>()).add(p);
            }
        }
        return kids;
    }
}
