package io.kvroute.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.bench.fleet.FleetSpec;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What each noisy-neighbor arm asks of the router and the workers: the arms differ in exactly their flags. */
class NoisyNeighborArmsTest {

    private static final Path TENANTS = Path.of("tenants.yaml");

    private static FleetSpec spec(String arm) {
        return new NoisyNeighborScenario().spec(arm, NoisyNeighborScenario.FULL, 4.0, TENANTS);
    }

    @Test
    void enginePriorityFleetArm_isTheEnginePriorityArm_withFleetWideCapacity() {
        FleetSpec perWorker = spec(NoisyNeighborScenario.FULL_QOS_ENGINE_PRIORITY);
        FleetSpec fleet = spec(NoisyNeighborScenario.FULL_QOS_ENGINE_PRIORITY_FLEET);

        assertThat(fleet.workerArgs()).isEqualTo(perWorker.workerArgs()).contains("--enable-priority-scheduling");
        assertThat(perWorker.routerArgs()).contains("--qos-engine-priority").doesNotContain("--qos-capacity-scope");
        assertThat(fleet.routerArgs()).containsSubsequence("--qos-capacity-scope", "fleet");
        List<String> rest = new java.util.ArrayList<>(fleet.routerArgs());
        rest.removeAll(List.of("--qos-capacity-scope", "fleet"));
        assertThat(rest).isEqualTo(perWorker.routerArgs());
    }

    @Test
    void fullQos_usesTheDefaultPerWorkerCapacity_andNoEnginePriority() {
        FleetSpec full = spec(NoisyNeighborScenario.FULL_QOS);
        assertThat(full.routerArgs()).contains("--tenants-file", "--qos-worker-capacity-tokens")
                .doesNotContain("--qos-capacity-scope", "--qos-engine-priority");
        assertThat(Collections.frequency(full.workerArgs(), "--enable-priority-scheduling")).isZero();
    }
}
