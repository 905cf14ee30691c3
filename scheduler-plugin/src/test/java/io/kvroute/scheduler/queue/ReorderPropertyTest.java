package io.kvroute.scheduler.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** For random ready lists, every strategy returns a permutation that keeps decode order, deterministically. */
class ReorderPropertyTest {

    @Test
    void reorder_isAlwaysAPermutationKeepingDecodeOrder() {
        Random rnd = new Random(42);
        for (int round = 0; round < 500; round++) {
            List<SchedRequest> ready = randomReady(rnd, rnd.nextInt(60));
            long processed = rnd.nextInt(200_000);
            for (String name : PrefillQueueStrategy.NAMES) {
                List<SchedRequest> out = PrefillQueueStrategy.forName(name).reorder(ready, processed);
                assertPermutation(ready, out);
                List<SchedRequest> decodeIn = ready.stream().filter(SchedRequest::isDecode).toList();
                assertThat(out.subList(0, decodeIn.size())).containsExactlyElementsOf(decodeIn);
                // prefill group: negative priority first
                List<SchedRequest> prefillOut = out.subList(decodeIn.size(), out.size());
                int firstNormal = (int) prefillOut.stream().filter(r -> r.inferHighPriority() < 0).count();
                assertThat(prefillOut.subList(0, firstNormal)).allMatch(r -> r.inferHighPriority() < 0);
                // deterministic: a fresh instance on the same input gives the same order
                assertThat(PrefillQueueStrategy.forName(name).reorder(ready, processed)).isEqualTo(out);
            }
        }
    }

    /** HRRN's fast packed-key sort against a naive comparator sort, with many exact and near ties. */
    @Test
    void hrrn_matchesNaiveComparatorSortIncludingTiesAndNearTies() {
        Random rnd = new Random(3);
        for (int round = 0; round < 300; round++) {
            int n = rnd.nextInt(400);
            List<SchedRequest> ready = new ArrayList<>();
            long processed = 1L << 40;
            for (int i = 0; i < n; i++) {
                int kind = rnd.nextInt(4);
                // kind 0: score 0 (arrived now); 1: few distinct exact ratios; 2: near ties; 3: random
                long arrival = kind == 0 ? processed
                        : kind == 1 ? processed - 100L * (1 + rnd.nextInt(3))
                        : kind == 2 ? processed - (1L << 30) - rnd.nextInt(3) : processed - rnd.nextInt(1 << 20);
                int input = kind == 1 ? 50 * (1 + rnd.nextInt(3)) : kind == 2 ? 1000 : 2 + rnd.nextInt(20_000);
                int seq = rnd.nextInt(50); // few values: many exact ties left to the arrival sequence
                SchedRequest r = SchedRequest.create("r" + seq, seq, input, 4, false, 0, arrival);
                r.admitWithCachedLen(0);
                ready.add(r);
            }
            List<SchedRequest> naive = new ArrayList<>(ready);
            naive.sort((a, b) -> {
                double sa = (double) Math.max(0, processed - a.arrivalProcessedTokens()) / Math.max(1, a.inputLen());
                double sb = (double) Math.max(0, processed - b.arrivalProcessedTokens()) / Math.max(1, b.inputLen());
                int c = Double.compare(sb, sa);
                return c != 0 ? c : Long.compare(a.arrivalSeq(), b.arrivalSeq());
            });
            assertThat(PrefillQueueStrategy.forName("hrrn").reorder(ready, processed)).containsExactlyElementsOf(naive);
        }
    }

    private static void assertPermutation(List<SchedRequest> in, List<SchedRequest> out) {
        assertThat(out).hasSameSizeAs(in);
        Map<SchedRequest, Integer> counts = new IdentityHashMap<>();
        for (SchedRequest r : in) {
            counts.merge(r, 1, Integer::sum);
        }
        for (SchedRequest r : out) {
            counts.merge(r, -1, Integer::sum);
        }
        assertThat(counts.values()).allMatch(c -> c == 0);
    }

    static List<SchedRequest> randomReady(Random rnd, int n) {
        List<SchedRequest> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int input = 1 + rnd.nextInt(rnd.nextBoolean() ? 200 : 20_000);
            SchedRequest r = SchedRequest.create("r" + i, rnd.nextInt(1000), input, 1 + rnd.nextInt(64),
                    rnd.nextInt(5) == 0, rnd.nextInt(6) == 0 ? 1 + rnd.nextInt(3) : 0, rnd.nextInt(200_000));
            r.admitWithCachedLen(rnd.nextInt(3) == 0 ? rnd.nextInt(input) : 0);
            int kind = rnd.nextInt(3);
            if (kind == 1) {
                r.advancePrefill(r.remainingPrefillTokens());
            } else if (kind == 2 && r.remainingPrefillTokens() > 1) {
                r.advancePrefill(1 + rnd.nextInt(r.remainingPrefillTokens() - 1));
            }
            out.add(r);
        }
        Collections.shuffle(out, rnd);
        return Collections.unmodifiableList(out);
    }
}
