package io.kvroute.router.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.EngineType;
import io.kvroute.router.worker.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The exact index asks each worker with its own engine's ids: one lookup for a fleet whose engines all
 * take the primary ids (and then the other engine's rendering is never computed), one per rendering in a
 * mixed fleet with each answer kept for its own workers, none for workers whose engine's ids are unknown.
 */
class EngineTokenIdsTest {

    private static final int[] SGLANG_IDS = {1, 2, 3};
    private static final int[] VLLM_IDS = {1, 2, 4};

    /** Answers every worker it knows (not only the asked ones, as ExactPrefixSource allows) by the ids' last value. */
    private static final class RecordingSource implements ExactPrefixSource {
        final List<List<String>> askedWorkers = new ArrayList<>();
        final List<int[]> askedIds = new ArrayList<>();
        final List<Worker> all;

        RecordingSource(List<Worker> all) {
            this.all = all;
        }

        @Override
        public Map<String, Long> matchedTokens(List<Worker> candidates, int[] tokenIds) {
            askedWorkers.add(candidates.stream().map(Worker::id).toList());
            askedIds.add(tokenIds);
            Map<String, Long> out = new HashMap<>();
            all.forEach(w -> out.put(w.id(), (long) tokenIds[tokenIds.length - 1]));
            return out;
        }
    }

    private static Worker worker(String host, EngineType engine) {
        Worker w = Worker.regular("http://" + host + ":1");
        return engine == null ? w : w.withEngine(engine);
    }

    @Test
    void oneEngineKind_oneLookupWithThePrimaryIds_otherRenderingNeverComputed() {
        List<Worker> fleet = List.of(worker("s1", EngineType.SGLANG), worker("s2", EngineType.SGLANG), worker("u", null));
        AtomicInteger renders = new AtomicInteger();
        EngineTokenIds ids = new EngineTokenIds(SGLANG_IDS, e -> {
            renders.incrementAndGet();
            return e == EngineType.VLLM ? VLLM_IDS : SGLANG_IDS;
        });
        RecordingSource source = new RecordingSource(fleet);
        Map<String, Long> answers = EngineTokenIds.matchedTokens(source, fleet, SGLANG_IDS, ids, null, PromptExtras.NONE);
        assertThat(source.askedIds).containsExactly(SGLANG_IDS);
        assertThat(source.askedWorkers).containsExactly(fleet.stream().map(Worker::id).toList());
        assertThat(answers).hasSize(3).containsValue(3L);
        assertThat(renders).as("SGLang asked once, vLLM never").hasValue(1);
    }

    @Test
    void mixedFleet_eachWorkerAnsweredWithItsOwnEnginesIds() {
        Worker s1 = worker("s1", EngineType.SGLANG);
        Worker v1 = worker("v1", EngineType.VLLM);
        Worker s2 = worker("s2", EngineType.SGLANG);
        Worker v2 = worker("v2", EngineType.VLLM);
        List<Worker> fleet = List.of(s1, v1, s2, v2);
        AtomicInteger vllmRenders = new AtomicInteger();
        EngineTokenIds ids = new EngineTokenIds(SGLANG_IDS, e -> {
            if (e == EngineType.VLLM) {
                vllmRenders.incrementAndGet();
                return VLLM_IDS;
            }
            return SGLANG_IDS;
        });
        RecordingSource source = new RecordingSource(fleet);
        Map<String, Long> answers = EngineTokenIds.matchedTokens(source, fleet, SGLANG_IDS, ids, null, PromptExtras.NONE);
        assertThat(answers).containsExactlyInAnyOrderEntriesOf(Map.of(s1.id(), 3L, s2.id(), 3L, v1.id(), 4L, v2.id(), 4L));
        assertThat(source.askedWorkers).containsExactlyInAnyOrder(List.of(s1.id(), s2.id()), List.of(v1.id(), v2.id()));
        assertThat(vllmRenders).as("computed once for both vLLM workers").hasValue(1);
        assertThat(ids.forEngine(EngineType.VLLM)).isSameAs(VLLM_IDS);
        assertThat(vllmRenders).hasValue(1);
    }

    @Test
    void engineWhoseIdsAreUnknown_getsNoExactAnswer() {
        Worker s = worker("s", EngineType.SGLANG);
        Worker v = worker("v", EngineType.VLLM);
        EngineTokenIds ids = new EngineTokenIds(SGLANG_IDS, e -> e == EngineType.VLLM ? null : SGLANG_IDS);
        RecordingSource source = new RecordingSource(List.of(s, v));
        Map<String, Long> answers = EngineTokenIds.matchedTokens(source, List.of(v, s), SGLANG_IDS, ids, null, PromptExtras.NONE);
        assertThat(answers).containsOnlyKeys(s.id());
        assertThat(source.askedWorkers).containsExactly(List.of(s.id()));
        assertThat(ids.forEngine(EngineType.VLLM)).isNull();
        assertThat(ids.forEngine(null)).as("an engine not discovered yet").isSameAs(SGLANG_IDS);
    }

    @Test
    void routingOnlyIds_noWorkerIsAsked_notEvenOneNotTypedYet() {
        List<Worker> fleet = List.of(worker("u", null), worker("s", EngineType.SGLANG), worker("v", EngineType.VLLM));
        RecordingSource source = new RecordingSource(fleet);
        assertThat(EngineTokenIds.matchedTokens(source, fleet, SGLANG_IDS, EngineTokenIds.routingOnly(SGLANG_IDS), null,
                PromptExtras.NONE))
                .isEmpty();
        assertThat(source.askedIds).isEmpty();
    }

    @Test
    void noPerEngineIds_theRequestsIdsForEveryWorker() {
        List<Worker> fleet = List.of(worker("s", EngineType.SGLANG), worker("v", EngineType.VLLM));
        RecordingSource source = new RecordingSource(fleet);
        assertThat(EngineTokenIds.matchedTokens(source, fleet, VLLM_IDS, null, null, PromptExtras.NONE)).hasSize(2);
        assertThat(source.askedIds).containsExactly(VLLM_IDS);
    }
}
