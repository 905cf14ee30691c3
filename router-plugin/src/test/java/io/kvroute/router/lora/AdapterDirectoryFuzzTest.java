package io.kvroute.router.lora;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.load.LoraReading;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link AdapterDirectory} against a naive model: random card lists, scrapes, loads, dispatches and
 * removals; after every operation the published view must equal the model's.
 */
class AdapterDirectoryFuzzTest {

    /** The naive model: plain mutable state per worker. */
    private static final class Model {
        final Map<String, Set<String>> listed = new HashMap<>();
        final Map<String, String> base = new HashMap<>();
        final Map<String, Set<String>> running = new HashMap<>();
        final Map<String, Set<String>> waiting = new HashMap<>();
        final Map<String, Integer> maxLoras = new HashMap<>();
        final Map<String, Integer> slotsUsed = new HashMap<>();
        final Map<String, LinkedList<String>> recent = new HashMap<>();

        int cap(String w) {
            return Math.max(1, maxLoras.getOrDefault(w, 0));
        }

        void trim(String w) {
            LinkedList<String> r = recent.get(w);
            while (r != null && r.size() > cap(w)) {
                r.removeLast();
            }
        }
    }

    private static final String[] WORKERS = {"w0", "w1", "w2", "w3"};

    private static String baseOf(String worker) {
        return "base-" + (worker.charAt(1) - '0') % 2;
    }

    private static Set<String> someAdapters(Random rnd, String base) {
        Set<String> out = new HashSet<>();
        int n = rnd.nextInt(5);
        for (int i = 0; i < n; i++) {
            out.add(base + "/a" + rnd.nextInt(8));
        }
        return out;
    }

    @Test
    void viewEqualsNaiveModelAfterEveryOperation() {
        for (long seed = 1; seed <= 20; seed++) {
            Random rnd = new Random(seed);
            AdapterDirectory dir = new AdapterDirectory();
            Model m = new Model();
            for (int step = 0; step < 2_000; step++) {
                String w = WORKERS[rnd.nextInt(WORKERS.length)];
                String base = baseOf(w);
                String adapter = base + "/a" + rnd.nextInt(8);
                switch (rnd.nextInt(6)) {
                    case 0 -> {
                        Set<String> cards = someAdapters(rnd, base);
                        dir.updateCards(w, base, cards);
                        m.listed.put(w, cards);
                        m.base.put(w, base);
                    }
                    case 1 -> {
                        LoraReading r = rnd.nextInt(5) == 0 ? null : new LoraReading(someAdapters(rnd, base),
                                someAdapters(rnd, base), rnd.nextInt(5), rnd.nextBoolean() ? -1 : rnd.nextInt(5));
                        dir.updateLoad(w, r);
                        m.running.put(w, r == null ? Set.of() : r.running());
                        m.waiting.put(w, r == null ? Set.of() : r.waiting());
                        if (r != null) {
                            m.maxLoras.put(w, r.maxLoras());
                            m.slotsUsed.put(w, r.slotsUsed());
                        }
                        m.trim(w);
                    }
                    case 2, 3 -> {
                        dir.noteDispatch(w, adapter);
                        LinkedList<String> r = m.recent.computeIfAbsent(w, k -> new LinkedList<>());
                        r.remove(adapter);
                        r.addFirst(adapter);
                        m.trim(w);
                    }
                    case 4 -> {
                        dir.noteLoaded(w, adapter, base);
                        m.listed.computeIfAbsent(w, k -> new HashSet<>());
                        Set<String> l = new HashSet<>(m.listed.get(w));
                        l.add(adapter);
                        m.listed.put(w, l);
                        m.base.putIfAbsent(w, base);
                    }
                    default -> {
                        if (rnd.nextInt(4) == 0) {
                            dir.removeWorker(w);
                            for (Map<String, ?> map : List.of(m.listed, m.base, m.running, m.waiting, m.maxLoras,
                                    m.slotsUsed, m.recent)) {
                                map.remove(w);
                            }
                        }
                    }
                }
                check(dir.current(), m, seed, step);
            }
        }
    }

    private static void check(AdapterView view, Model m, long seed, int step) {
        String where = "seed " + seed + " step " + step;
        Map<String, String> baseOf = new HashMap<>();
        for (String w : WORKERS) {
            WorkerAdapters got = view.of(w);
            assertThat(got.listed()).as(where + " listed " + w).isEqualTo(m.listed.getOrDefault(w, Set.of()));
            assertThat(got.running()).as(where + " running " + w).isEqualTo(m.running.getOrDefault(w, Set.of()));
            assertThat(got.waiting()).as(where + " waiting " + w).isEqualTo(m.waiting.getOrDefault(w, Set.of()));
            assertThat(got.maxLoras()).as(where + " maxLoras " + w).isEqualTo(m.maxLoras.getOrDefault(w, 0));
            assertThat(got.slotsUsed()).as(where + " slotsUsed " + w).isEqualTo(m.slotsUsed.getOrDefault(w, -1));
            assertThat(view.recentOf(w)).as(where + " recent " + w)
                    .isEqualTo(new ArrayList<>(m.recent.getOrDefault(w, new LinkedList<>())));
            if (m.base.containsKey(w)) {
                for (String a : m.listed.getOrDefault(w, Set.of())) {
                    baseOf.put(a, m.base.get(w));
                }
            }
        }
        assertThat(view.baseOf()).as(where + " baseOf").isEqualTo(baseOf);
    }
}
