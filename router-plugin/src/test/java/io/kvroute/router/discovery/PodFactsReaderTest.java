package io.kvroute.router.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodFactsReaderTest {

    private static PodBuilder running(String readyStatus) {
        return new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withLabels(Map.of("app", "llm"))
                .endMetadata()
                .withNewStatus().withPhase("Running").withPodIP("10.0.0.7")
                .addNewCondition().withType("PodScheduled").withStatus("True").endCondition()
                .addNewCondition().withType("Ready").withStatus(readyStatus).endCondition()
                .endStatus();
    }

    @Test
    void runningReadyPod_readsAllFacts() {
        PodFacts facts = PodFactsReader.read(running("True").build());
        assertThat(facts).isEqualTo(new PodFacts("ns/p", true, true, false, "10.0.0.7", Map.of("app", "llm"), Map.of()));
    }

    @Test
    void readyFalse_terminating_pending_andNoStatus_areReadAsSuch() {
        assertThat(PodFactsReader.read(running("False").build()).ready()).isFalse();
        Pod terminating = running("True").editMetadata().withDeletionTimestamp("2026-12-01T15:00:00Z").endMetadata().build();
        assertThat(PodFactsReader.read(terminating).terminating()).isTrue();
        Pod pending = running("True").editStatus().withPhase("Pending").endStatus().build();
        assertThat(PodFactsReader.read(pending).running()).isFalse();
        PodFacts bare = PodFactsReader.read(new PodBuilder().withNewMetadata().withNamespace("ns").withName("q")
                .endMetadata().build());
        assertThat(bare).extracting(PodFacts::running, PodFacts::ready, PodFacts::ip).containsExactly(false, false, null);
    }
}
