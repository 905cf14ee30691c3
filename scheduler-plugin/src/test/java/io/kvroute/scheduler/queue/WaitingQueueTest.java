package io.kvroute.scheduler.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class WaitingQueueTest {

    private static boolean high(String s) {
        return s.startsWith("H");
    }

    @Test
    void highPriorityRequests_goBeforeFirstNormalRequestFifoAmongThemselves() {
        WaitingQueue<String> q = new WaitingQueue<>(WaitingQueueTest::high);
        q.add("n1");
        q.add("H1");
        q.add("n2");
        q.add("H2");
        assertThat(q.view()).containsExactly("H1", "H2", "n1", "n2");
    }

    @Test
    void randomOperations_matchNaiveModel() {
        Random rnd = new Random(7);
        WaitingQueue<String> q = new WaitingQueue<>(WaitingQueueTest::high);
        List<String> highModel = new ArrayList<>();
        List<String> normalModel = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            int op = rnd.nextInt(3);
            List<String> all = new ArrayList<>(highModel);
            all.addAll(normalModel);
            if (op <= 1 || all.isEmpty()) {
                String e = (rnd.nextBoolean() ? "H" : "n") + i;
                q.add(e);
                (high(e) ? highModel : normalModel).add(e);
            } else {
                String e = all.get(rnd.nextInt(all.size()));
                q.remove(e);
                (high(e) ? highModel : normalModel).remove(e);
            }
            if (i % 97 == 0) {
                q.removeIf(s -> s.endsWith("3"));
                highModel.removeIf(s -> s.endsWith("3"));
                normalModel.removeIf(s -> s.endsWith("3"));
            }
            List<String> expected = new ArrayList<>(highModel);
            expected.addAll(normalModel);
            assertThat(q.view()).isEqualTo(expected);
        }
    }
}
