package io.kvroute.router.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Long edge compares run with the lock released and are validated by the structure version
 * afterwards. These tests change the tree's shape deterministically inside that window (through
 * the test hook, from the same thread, which is allowed because the lock is not held) and require
 * the result of the racing call to equal the naive model's.
 */
class PrefixIndexUnlockedCompareTest {
    private static final int[] LONG = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    private static final int[] BRANCH = {1, 2, 3, 9, 9};

    private final long[] clock = {0};
    private final PrefixIndexConfig config = new PrefixIndexConfig(1_000, 1_000);
    private final PrefixIndex index = new PrefixIndex(config, () -> ++clock[0], 2);
    private final NaivePrefixModel model = new NaivePrefixModel(config);

    /** Runs {@code change} once, in the first unlocked compare window. */
    private void raceOnce(Runnable change) {
        boolean[] done = {false};
        index.unlockedCompareHook = () -> {
            if (!done[0]) {
                done[0] = true;
                change.run();
            }
        };
    }

    private void insertBoth(int[] key, String worker) {
        index.insert(key, worker);
        model.insert(key, worker, clock[0]);
    }

    @Test
    void match_splitDuringUnlockedCompare_restartsAndSeesTheNewShape() {
        insertBoth(LONG, "w0");
        raceOnce(() -> insertBoth(BRANCH, "w1")); // splits the edge being compared after 3

        PrefixMatch match = index.match(LONG);

        assertThat(match.matchedByWorker()).isEqualTo(model.match(LONG));
        assertThat(match.matchedLength("w1")).isEqualTo(3);
        assertThat(match.matchedLength("w0")).isEqualTo(10);
    }

    @Test
    void insert_splitDuringUnlockedCompare_endsInTheSerialOrdersState() {
        insertBoth(LONG, "w0");
        raceOnce(() -> insertBoth(BRANCH, "w1"));

        int[] longer = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        index.insert(longer, "w2"); // compares LONG's edge unlocked; its tick is read afterwards
        model.insert(longer, "w2", clock[0]);

        PrefixIndexInvariants.check(index);
        assertThat(PrefixIndexInvariants.expand(index)).isEqualTo(model.positions);
    }

    @Test
    void insertMatched_staleHintAfterRacingEviction_walksAgainAndMatchesTheModel() {
        insertBoth(LONG, "w0");
        PrefixMatch match = index.match(LONG);
        index.setWorkerCapacity("w0", 4); // trims LONG's edge: the hint is stale
        model.setCapacity("w0", 4);
        raceOnce(() -> insertBoth(BRANCH, "w1"));

        index.insertMatched(match, "w2");
        model.insert(LONG, "w2", clock[0]);

        PrefixIndexInvariants.check(index);
        assertThat(PrefixIndexInvariants.expand(index)).isEqualTo(model.positions);
    }
}
