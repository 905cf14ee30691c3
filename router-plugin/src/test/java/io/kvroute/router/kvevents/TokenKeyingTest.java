package io.kvroute.router.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.protocol.KvEvent;
import io.kvroute.protocol.KvEventWire;
import io.kvroute.protocol.KvMalformedReason;
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
 * {@link TokenKeying} with a real {@link BlockIndex}: engine hashes are random numbers unrelated to
 * the tokens (vLLM's per-process seed), and a request's {@link TokenChainHash} must still match
 * what was stored. Then a fuzz against a naive model (which engine blocks are held) with parents,
 * removals, clears and the bound.
 */
class TokenKeyingTest {
    private static final int BS = 4;
    private static final BlockIndex.Key KEY = new BlockIndex.Key("m", -1, BS);
    private static final int SLOT = 3;

    private final BlockIndex index = new BlockIndex(1 << 16);
    private final SplittableRandom rnd = new SplittableRandom(17);

    private static KvEvent.BlockStored stored(long[] engine, Long parent, int[] tokens) {
        return new KvEvent.BlockStored(engine, parent != null, parent == null ? 0 : parent, BS, -1, tokens);
    }

    private int matched(int[] request) {
        return index.match(KEY, TokenChainHash.hashes(request, request.length, BS, -1), SLOT + 1)[SLOT];
    }

    private long[] randomHashes(int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = rnd.nextLong();
        }
        return out;
    }

    @Test
    void randomEngineHashes_chainedAcrossEvents_matchTheRequestsOwnHashes() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 40, 41};
        long[] engine = randomHashes(3);
        assertThat(k.stored(stored(Arrays.copyOf(engine, 2), null, Arrays.copyOf(prompt, 8)), BS, index, KEY, SLOT))
                .isEqualTo(2);
        assertThat(matched(prompt)).isEqualTo(2);
        // the third block arrives later, its parent given by ENGINE hash: continued from the parent's own hash
        k.stored(stored(new long[] {engine[2]}, engine[1], Arrays.copyOfRange(prompt, 8, 12)), BS, index, KEY, SLOT);
        assertThat(matched(prompt)).isEqualTo(3);
        assertThat(k.ownHash(engine[2], 0)).isEqualTo(TokenChainHash.hashes(prompt, 12, BS, -1)[2]);
        // engine hashes themselves are not in the index: a query by them finds nothing
        assertThat(index.match(KEY, engine, SLOT + 1)[SLOT]).isZero();
    }

    @Test
    void blockRemoved_translatesEngineHashes_andIgnoresUnknownOnes() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        long[] engine = randomHashes(3);
        k.stored(stored(engine, null, prompt), BS, index, KEY, SLOT);
        assertThat(k.removed(new long[] {engine[2], 999}, index, SLOT)).isEqualTo(1);
        assertThat(matched(prompt)).isEqualTo(2);
        assertThat(k.size()).isEqualTo(2);
        k.removed(new long[] {engine[0]}, index, SLOT);
        assertThat(matched(prompt)).isZero(); // the chain's head is gone
        assertThat(index.blocks(SLOT)).isEqualTo(1);
    }

    @Test
    void twoEngineBlocksWithTheSameTokens_shareAnOwnHash_untilTheLastLeaves() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {1, 2, 3, 4};
        k.stored(stored(new long[] {111}, null, prompt), BS, index, KEY, SLOT);
        k.stored(stored(new long[] {222}, null, prompt), BS, index, KEY, SLOT); // e.g. another extra_keys salt
        k.removed(new long[] {111}, index, SLOT);
        assertThat(matched(prompt)).isEqualTo(1);
        k.removed(new long[] {222}, index, SLOT);
        assertThat(matched(prompt)).isZero();
    }

    @Test
    void unknownParent_missingOrWrongLengthTokens_areRefusedWithAReason_andChangeNothing() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {1, 2, 3, 4, 5, 6, 7, 8};
        assertReason(() -> k.stored(stored(new long[] {5}, 77L, Arrays.copyOf(prompt, 4)), BS, index, KEY, SLOT),
                KvMalformedReason.UNKNOWN_PARENT);
        assertReason(() -> k.stored(stored(new long[] {5}, null, null), BS, index, KEY, SLOT),
                KvMalformedReason.MISSING_TOKEN_IDS);
        assertReason(() -> k.stored(stored(new long[] {5, 6}, null, Arrays.copyOf(prompt, 7)), BS, index, KEY, SLOT),
                KvMalformedReason.TOKEN_IDS_LENGTH);
        assertReason(() -> k.stored(stored(new long[] {5}, null, prompt), BS, index, KEY, SLOT),
                KvMalformedReason.TOKEN_IDS_LENGTH);
        assertThat(k.size()).isZero();
        assertThat(index.blocks(SLOT)).isZero();
    }

    @Test
    void clear_forgetsTheMap_soAnOldParentIsUnknown() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {1, 2, 3, 4, 5, 6, 7, 8};
        k.stored(stored(new long[] {41}, null, Arrays.copyOf(prompt, 4)), BS, index, KEY, SLOT);
        k.clear();
        index.clear(SLOT);
        assertThat(k.size()).isZero();
        assertReason(() -> k.stored(stored(new long[] {42}, 41L, Arrays.copyOfRange(prompt, 4, 8)), BS, index, KEY, SLOT),
                KvMalformedReason.UNKNOWN_PARENT);
    }

    @Test
    void theMapIsBounded_storesBeyondAreRefusedAndCounted_andRemovalsMakeRoom() throws Exception {
        TokenKeying k = new TokenKeying(3);
        int[] prompt = new int[5 * BS];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = i;
        }
        long[] engine = randomHashes(5);
        assertThat(k.stored(stored(engine, null, prompt), BS, index, KEY, SLOT)).isEqualTo(3);
        assertThat(k.size()).isEqualTo(3);
        assertThat(k.refusedBlocks()).isEqualTo(2);
        assertThat(matched(prompt)).isEqualTo(3);
        assertReason(() -> k.stored(stored(new long[] {engine[3]}, engine[2], Arrays.copyOfRange(prompt, 12, 16)), BS,
                index, KEY, SLOT), null); // parent known: accepted but refused at the bound
        assertThat(k.refusedBlocks()).isEqualTo(3);
        k.removed(new long[] {engine[0]}, index, SLOT);
        assertThat(k.stored(stored(new long[] {engine[3]}, engine[2], Arrays.copyOfRange(prompt, 12, 16)), BS, index,
                KEY, SLOT)).isEqualTo(1);
        assertThat(k.size()).isEqualTo(3);
    }

    /**
     * Random chains of random engine hashes; stores of chain segments (parent = the engine hash of
     * the block before the segment), removals of random blocks, clears, with a small bound. The model
     * keeps the set of engine blocks held; after every operation the index must hold exactly the own
     * hashes of the held blocks, and nothing else for this slot.
     */
    /**
     * A lower tier's copy named by engine hash alone (vLLM's CPU offload) takes the GPU keying's own
     * hashes; it stops at the first block neither map knows, is refused when none is known, and
     * counts a store beyond the bound as refused, not malformed.
     */
    @Test
    void storedByHash_takesTheKnownOwnHashes_stopsAtTheFirstUnknown_andHonoursTheBound() throws Exception {
        TokenKeying gpu = new TokenKeying(100);
        TokenKeying lower = new TokenKeying(2);
        BlockIndex lowerIndex = new BlockIndex(1 << 16);
        int[] prompt = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33};
        long[] engine = randomHashes(3);
        gpu.stored(stored(Arrays.copyOf(engine, 2), null, Arrays.copyOf(prompt, 8)), BS, index, KEY, SLOT);
        long[] own = TokenChainHash.hashes(prompt, prompt.length, BS, -1);

        // blocks 0, 1 known on the GPU, block 2 never seen: two stored under the request's own hashes
        KvEvent.BlockStored copy = new KvEvent.BlockStored(engine, false, 0, BS, -1, new int[0]);
        assertThat(lower.storedByHash(copy, gpu, lowerIndex, KEY, SLOT)).isEqualTo(2);
        assertThat(lowerIndex.match(KEY, own, SLOT + 1)[SLOT]).isEqualTo(2);
        assertThat(lower.ownHash(engine[1], 0)).isEqualTo(own[1]);

        assertReason(() -> lower.storedByHash(new KvEvent.BlockStored(new long[] {engine[2]}, false, 0, BS, -1,
                new int[0]), gpu, lowerIndex, KEY, SLOT), KvMalformedReason.MISSING_TOKEN_IDS);
        assertReason(() -> lower.storedByHash(new KvEvent.BlockStored(new long[] {engine[0]}, true, 4242, BS, -1,
                new int[0]), gpu, lowerIndex, KEY, SLOT), KvMalformedReason.UNKNOWN_PARENT);

        // the lower map is full (2 entries): a third known block is refused at the bound, not malformed
        gpu.stored(stored(new long[] {engine[2]}, engine[1], Arrays.copyOfRange(prompt, 8, 12)), BS, index, KEY, SLOT);
        assertThat(lower.storedByHash(new KvEvent.BlockStored(new long[] {engine[2]}, true, engine[1], BS, -1,
                new int[0]), gpu, lowerIndex, KEY, SLOT)).isZero();
        assertThat(lower.refusedBlocks()).isEqualTo(1);
    }

    @Test
    void randomOperations_matchANaiveModel() throws Exception {
        for (long seed = 1; seed <= 4; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            BlockIndex idx = new BlockIndex(1 << 16);
            int bound = 40;
            TokenKeying k = new TokenKeying(bound);
            List<int[]> tokens = new ArrayList<>();
            List<long[]> engine = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                int blocks = 1 + r.nextInt(12);
                int[] t = new int[blocks * BS];
                int[] shared = c > 0 && r.nextBoolean() ? tokens.get(r.nextInt(c)) : new int[0];
                for (int i = 0; i < t.length; i++) {
                    t[i] = i < Math.min(2 * BS, shared.length) ? shared[i] : r.nextInt(50);
                }
                tokens.add(t);
                long[] e = new long[blocks];
                for (int b = 0; b < blocks; b++) {
                    e[b] = r.nextLong(); // a shared token prefix still gets other engine hashes: like salted blocks
                }
                engine.add(e);
            }
            Set<Long> held = new HashSet<>();
            Map<Long, Long> ownOf = new HashMap<>();
            for (int c = 0; c < tokens.size(); c++) {
                long[] own = TokenChainHash.hashes(tokens.get(c), tokens.get(c).length, BS, -1);
                for (int b = 0; b < own.length; b++) {
                    ownOf.put(engine.get(c)[b], own[b]);
                }
            }
            for (int op = 0; op < 3000; op++) {
                int c = r.nextInt(tokens.size());
                long[] e = engine.get(c);
                int from = r.nextInt(e.length);
                int to = from + 1 + r.nextInt(e.length - from);
                int kind = r.nextInt(20);
                if (kind < 11) {
                    Long parent = from == 0 ? null : e[from - 1];
                    KvEvent.BlockStored s = new KvEvent.BlockStored(Arrays.copyOfRange(e, from, to), parent != null,
                            parent == null ? 0 : parent, BS, -1, Arrays.copyOfRange(tokens.get(c), from * BS, to * BS));
                    if (parent != null && !held.contains(parent)) {
                        assertReason(() -> k.stored(s, BS, idx, KEY, SLOT), KvMalformedReason.UNKNOWN_PARENT);
                    } else {
                        k.stored(s, BS, idx, KEY, SLOT);
                        for (int b = from; b < to; b++) {
                            if (!held.contains(e[b]) && held.size() >= bound) {
                                break;
                            }
                            held.add(e[b]);
                        }
                    }
                } else if (kind < 19) {
                    long[] gone = Arrays.copyOfRange(e, from, to);
                    k.removed(gone, idx, SLOT);
                    for (long g : gone) {
                        held.remove(g);
                    }
                } else {
                    k.clear();
                    idx.clear(SLOT);
                    held.clear();
                }
                assertThat(k.size()).isEqualTo(held.size());
                Set<Long> expectedOwn = new HashSet<>();
                held.forEach(h -> expectedOwn.add(ownOf.get(h)));
                for (long h : ownOf.values()) {
                    int m = idx.match(KEY, new long[] {h}, SLOT + 1)[SLOT];
                    assertThat(m == 1).as("seed %d op %d own %d", seed, op, h).isEqualTo(expectedOwn.contains(h));
                }
                assertThat(idx.blocks(SLOT)).isEqualTo(expectedOwn.size());
            }
        }
    }

    interface Call {
        void run() throws Exception;
    }

    /** {@code reason} null: the call must not throw. */
    private static void assertReason(Call call, KvMalformedReason reason) throws Exception {
        if (reason == null) {
            call.run();
            return;
        }
        assertThatThrownBy(call::run).isInstanceOfSatisfying(KvEventWire.Malformed.class,
                m -> assertThat(m.reason).isEqualTo(reason));
    }

    /**
     * A salted request's chain is the one stored for vLLM's event of that request: its {@code extra_keys} entry
     * {@code (cache_salt,)} on the first block only (nil after), folded as the decoder folds it; every block
     * matches, and neither the plain request nor another salt meets any of them.
     */
    @Test
    void cacheSaltOnTheFirstBlock_chainsAsTheStoredEventsExtraKeys() throws Exception {
        TokenKeying k = new TokenKeying(100);
        int[] prompt = {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33};
        long salt = KvEventWire.extraKeysOf(List.of("tenant-a"));
        k.stored(new KvEvent.BlockStored(randomHashes(3), false, 0, BS, -1, prompt, "GPU", 0, null,
                new long[] {salt, 0, 0}), BS, index, KEY, SLOT);
        assertThat(index.match(KEY, TokenChainHash.hashes(prompt, prompt.length, BS, -1, salt), SLOT + 1)[SLOT])
                .isEqualTo(3);
        assertThat(matched(prompt)).isZero();
        long other = KvEventWire.extraKeysOf(List.of("tenant-b"));
        assertThat(index.match(KEY, TokenChainHash.hashes(prompt, prompt.length, BS, -1, other), SLOT + 1)[SLOT])
                .isZero();
    }
}
