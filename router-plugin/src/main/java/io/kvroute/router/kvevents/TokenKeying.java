package io.kvroute.router.kvevents;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.KvMalformedReason;
import java.util.Arrays;

/**
 * Keys one publisher's blocks by the router's own hash of their tokens ({@code --kv-events-hash
 * tokens}; as Dynamo does for engines whose hashes cannot be
 * reproduced). On BlockStored the router hashes the event's {@code token_ids} block by block with
 * {@link TokenChainHash}, continuing from the parent's OWN hash, stores the blocks in the
 * {@link BlockIndex} under those own hashes, and remembers engine hash → own hash; BlockRemoved
 * translates through that map; AllBlocksCleared (and a restart or failed replay, through the
 * caller) forgets it. A request's tokens are hashed with the same {@link TokenChainHash}, so query
 * and stored hashes meet.
 *
 * <p><b>Invariants.</b> Every own hash the index holds for this slot is the value of at least one
 * map entry, and {@code refs[own]} is the number of entries mapping to it (two engine blocks can
 * have the same tokens and parent, e.g. vLLM blocks that differ only by {@code extra_keys}); an own
 * hash leaves the index only when its last engine block leaves. The map holds at most
 * {@code maxEntries} engine hashes (the index's per-slot bound): a store beyond it is refused and
 * counted ({@link #refusedBlocks}), which, like the index's own bound, can only under-report.
 *
 * <p>A block with vLLM {@code extra_keys} (cache salt, multimodal ids, prompt embeddings) gets its
 * own hash salted with them, so it and every block after it form a chain apart from the same tokens
 * without them: a request hashed from its tokens alone never matches it, as vLLM never would; a request
 * whose {@code cache_salt} makes the same first-block entry is salted the same ({@link ExactCacheIndex}).
 *
 * <p><b>Refused events</b> (thrown as {@link KvEventWire.Malformed} before anything changes):
 * no {@code token_ids}, {@code token_ids} not exactly blocks × block size long, or a parent engine
 * hash this router does not know (stored before it subscribed, refused at the bound, or already
 * evicted): the chain cannot be continued, so it is dropped.
 *
 * <p>Not thread-safe: the events thread owns one instance per publisher slot.
 */
final class TokenKeying {
    private final int maxEntries;
    /** Engine block hash → own hash. */
    private final LongLongMap engineToOwn = new LongLongMap();
    /** Own hash → number of engine hashes mapped to it. */
    private final LongLongMap ownRefs = new LongLongMap();
    private long refusedBlocks;

    TokenKeying(int maxEntries) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be positive, got " + maxEntries);
        }
        this.maxEntries = maxEntries;
    }

    /**
     * Hashes and stores a BlockStored's blocks for {@code slot} under {@code key}.
     *
     * @param blockSize the publisher's page size (the event's own was checked against it)
     * @return the number of blocks stored
     * @throws KvEventWire.Malformed when the event cannot be keyed; nothing changed then
     */
    int stored(KvEvent.BlockStored s, int blockSize, BlockIndex index, BlockIndex.Key key, int slot)
            throws KvEventWire.Malformed {
        return stored(s, blockSize, index, key, slot, null);
    }

    /**
     * As {@link #stored(KvEvent.BlockStored, int, BlockIndex, BlockIndex.Key, int)}, the parent looked up
     * in {@code known} too when this map lacks it (a lower tier's block whose parent is on the GPU only).
     */
    int stored(KvEvent.BlockStored s, int blockSize, BlockIndex index, BlockIndex.Key key, int slot, TokenKeying known)
            throws KvEventWire.Malformed {
        long[] engineHashes = s.blockHashes();
        int[] tokens = s.tokenIds();
        if (tokens == null) {
            throw new KvEventWire.Malformed(KvMalformedReason.MISSING_TOKEN_IDS);
        }
        if ((long) engineHashes.length * blockSize != tokens.length) {
            throw new KvEventWire.Malformed(KvMalformedReason.TOKEN_IDS_LENGTH);
        }
        long[] extra = s.extraKeys();
        if (extra != null && extra.length != engineHashes.length) {
            throw new KvEventWire.Malformed(KvMalformedReason.BAD_FIELD);
        }
        long parentOwn;
        if (s.hasParent()) {
            parentOwn = parentOwn(s.parentHash(), known);
        } else {
            parentOwn = TokenChainHash.root(s.loraId());
        }
        long firstParentOwn = parentOwn;
        long[] own = new long[engineHashes.length];
        int n = 0;
        for (int b = 0; b < engineHashes.length; b++) {
            long h = TokenChainHash.next(parentOwn, tokens, b * blockSize, blockSize);
            if (extra != null && extra[b] != 0) {
                h = TokenChainHash.salted(h, extra[b]); // vLLM keeps such blocks apart: so do we, and their children
            }
            int cell = engineToOwn.find(engineHashes[b]);
            if (cell >= 0) {
                long old = engineToOwn.valueAt(cell);
                if (old != h) { // the engine reused a hash for other tokens: the newer facts win
                    engineToOwn.setValueAt(cell, h);
                    addRef(h);
                    if (dropRef(old)) {
                        index.remove(slot, new long[] {old});
                    }
                }
            } else if (engineToOwn.size() >= maxEntries) {
                refusedBlocks += engineHashes.length - b; // the rest would have no known parent anyway
                break;
            } else {
                engineToOwn.put(engineHashes[b], h);
                addRef(h);
            }
            own[n++] = h;
            parentOwn = h;
        }
        if (n > 0) {
            // the own chain's parent, so the index's prefix-closure bookkeeping sees the same tree the tokens make
            index.store(key, slot, s.hasParent(), firstParentOwn, n == own.length ? own : Arrays.copyOf(own, n));
        }
        return n;
    }

    /**
     * Stores a BlockStored that names its blocks by engine hash alone, under the own hashes
     * {@code known} (the same publisher's GPU keying) already gives those engine hashes. vLLM's CPU
     * offload announces its copies of blocks the GPU still holds this way, {@code token_ids} empty
     * (Dynamo {@code lib/kv-router} keeps a memo of device blocks' identities for the same reason).
     * Blocks from the first one neither map knows are left out: their own hash cannot be known.
     *
     * @return the number of blocks stored
     * @throws KvEventWire.Malformed when the first block or the parent is unknown; nothing changed then
     */
    int storedByHash(KvEvent.BlockStored s, TokenKeying known, BlockIndex index, BlockIndex.Key key, int slot)
            throws KvEventWire.Malformed {
        long[] engineHashes = s.blockHashes();
        long parentOwn = s.hasParent() ? parentOwn(s.parentHash(), known) : TokenChainHash.root(s.loraId());
        long[] own = new long[engineHashes.length];
        int n = 0;
        boolean full = false;
        for (long e : engineHashes) {
            int cell = engineToOwn.find(e);
            long h;
            if (cell >= 0) {
                h = engineToOwn.valueAt(cell); // already held on this tier
            } else {
                int knownCell = known.engineToOwn.find(e);
                if (knownCell < 0) {
                    break; // neither tier knows its tokens: the rest of the chain cannot be keyed
                }
                if (engineToOwn.size() >= maxEntries) {
                    refusedBlocks += engineHashes.length - n;
                    full = true;
                    break;
                }
                h = known.engineToOwn.valueAt(knownCell);
                engineToOwn.put(e, h);
                addRef(h);
            }
            own[n++] = h;
        }
        if (n == 0) {
            if (full) {
                return 0; // refused at the bound, counted as such
            }
            throw new KvEventWire.Malformed(KvMalformedReason.MISSING_TOKEN_IDS);
        }
        index.store(key, slot, s.hasParent(), parentOwn, n == own.length ? own : Arrays.copyOf(own, n));
        return n;
    }

    /**
     * Removes a BlockRemoved's blocks for {@code slot}: each known engine hash is forgotten, and its
     * own hash leaves the index when no other engine block maps to it. Unknown hashes are ignored
     * (blocks stored before this router subscribed, or refused at the bound).
     *
     * @return the number of engine hashes that were known
     */
    int removed(long[] engineHashes, BlockIndex index, int slot) {
        long[] gone = new long[engineHashes.length];
        int n = 0;
        int known = 0;
        for (long e : engineHashes) {
            int cell = engineToOwn.find(e);
            if (cell < 0) {
                continue;
            }
            long own = engineToOwn.valueAt(cell);
            engineToOwn.removeAt(cell);
            known++;
            if (dropRef(own)) {
                gone[n++] = own;
            }
        }
        if (n > 0) {
            index.remove(slot, Arrays.copyOf(gone, n));
        }
        return known;
    }

    /** The own hash of a parent engine hash, from this map or else {@code known} (may be null). */
    private long parentOwn(long parentEngineHash, TokenKeying known) throws KvEventWire.Malformed {
        int cell = engineToOwn.find(parentEngineHash);
        if (cell >= 0) {
            return engineToOwn.valueAt(cell);
        }
        int knownCell = known == null ? -1 : known.engineToOwn.find(parentEngineHash);
        if (knownCell < 0) {
            throw new KvEventWire.Malformed(KvMalformedReason.UNKNOWN_PARENT);
        }
        return known.engineToOwn.valueAt(knownCell);
    }

    /** Forgets every mapping (the caller clears the slot in the index). */
    void clear() {
        engineToOwn.clear();
        ownRefs.clear();
    }

    int size() {
        return engineToOwn.size();
    }

    /** The own hash of an engine hash, or {@code absent}. */
    long ownHash(long engineHash, long absent) {
        int cell = engineToOwn.find(engineHash);
        return cell < 0 ? absent : engineToOwn.valueAt(cell);
    }

    /** Blocks not keyed because the map was full, since creation. */
    long refusedBlocks() {
        return refusedBlocks;
    }

    /** Bytes held by both maps. */
    long bytes() {
        return engineToOwn.bytes() + ownRefs.bytes();
    }

    private void addRef(long own) {
        int cell = ownRefs.find(own);
        if (cell >= 0) {
            ownRefs.setValueAt(cell, ownRefs.valueAt(cell) + 1);
        } else {
            ownRefs.put(own, 1);
        }
    }

    /** True when {@code own} lost its last engine block. */
    private boolean dropRef(long own) {
        int cell = ownRefs.find(own);
        if (cell < 0) {
            throw new IllegalStateException("own hash " + own + " has no reference count");
        }
        long left = ownRefs.valueAt(cell) - 1;
        if (left == 0) {
            ownRefs.removeAt(cell);
            return true;
        }
        ownRefs.setValueAt(cell, left);
        return false;
    }
}
