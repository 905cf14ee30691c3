package io.kvroute.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.bench.fleet.FleetSpec;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What each noisy-neighbor arm asks of the router and the workers: the arms differ in exactly their flags. */
class NoisyNeighborArmsTest {

    private static final Path TENANTS = Path.of("tenants.yaml");

    private static FleetSpec spec(String arm) {
        return new NoisyNeighborScenario().spec(arm, NoisyNeighborScenario.FULL, 4.0,
                NoisyNeighborScenario.FULL.holderWaitMs(), TENANTS);
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

    @Test
    void holderWait_isGivenInSimulatedTime_andScaledToWallTime_forEveryQosArm() {
        NoisyNeighborScenario scenario = new NoisyNeighborScenario();
        assertThat(scenario.spec(NoisyNeighborScenario.FULL_QOS, NoisyNeighborScenario.FULL, 4.0, 3_000, TENANTS).routerArgs())
                .containsSubsequence("--qos-holder-wait-ms", "750");
        assertThat(scenario.spec(NoisyNeighborScenario.ISOLATED, NoisyNeighborScenario.FULL, 4.0, 0, TENANTS).routerArgs())
                .containsSubsequence("--qos-holder-wait-ms", "0");
        assertThat(spec(NoisyNeighborScenario.FULL_QOS_ENGINE_PRIORITY).routerArgs())
                .as("the default: the router's own 200 ms of wall time at the default time scale")
                .containsSubsequence("--qos-holder-wait-ms", "200");
        assertThat(spec(NoisyNeighborScenario.NO_QOS).routerArgs()).doesNotContain("--qos-holder-wait-ms");
    }

    @Test
    void holderWaits_readPerClass_holderBoundPassedGone() {
        Map<String, Double> metrics = Map.of("qos_holder_waits_default_holder", 12.0,
                "qos_holder_waits_default_bound_passed", 30.0, "qos_holder_waits_interactive_gone", 1.0,
                "qos_locality_picks_default", 5.0);
        assertThat(NoisyNeighborScenario.holderWaits(metrics)).isEqualTo("interactive 0/0/1, default 12/30/0");
        assertThat(NoisyNeighborScenario.holderWaits(Map.of())).isEqualTo("-");
    }
}
