package io.kvroute.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvroute.bench.client.RequestRecord;
import io.kvroute.bench.workload.NoisyNeighborWorkload;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The noisy-neighbor figures on hand-made records: TTFT from the intended send time, shed vs cut, recovery, Jain. */
class NoisyNeighborFiguresTest {

    private static final long S = 1_000_000_000L;
    /** Speedup 2: wall nanoseconds are half the simulated ones; noise 10-20 s, run 30 s, 5 s recovery bins. */
    private static final NoisyNeighborFigures.Frame FRAME = new NoisyNeighborFigures.Frame(2.0, 10_000, 20_000, 30_000,
            5_000, 2.0, 60.0);

    private static RequestRecord chat(double scheduledSimSec, double ttftSimSec, int status, String error) {
        long at = (long) (scheduledSimSec * S / 2);
        long first = ttftSimSec < 0 ? -1 : at + (long) (ttftSimSec * S / 2);
        return new RequestRecord(0, NoisyNeighborWorkload.CHAT, "chat-0", at, at, at + S / 1000, first,
                first, first < 0 ? at + S : first + S / 100, status, error, 4, 100, 80);
    }

    @Test
    void ttftCountsFromTheIntendedSendTime_inSimulatedSeconds_andAFailureIsInfinite() {
        List<RequestRecord> records = new ArrayList<>();
        for (int i = 0; i < 99; i++) {
            records.add(chat(10 + i * 0.1, 0.5, 200, null));
        }
        records.add(chat(15, 1.5, 200, null));
        assertThat(NoisyNeighborFigures.of(records, FRAME).chatTtftP99NoiseSec()).isCloseTo(0.5, within(0.01));
        records.add(chat(16, -1, 0, "failed: EofException"));
        records.add(chat(16, -1, 0, "failed: EofException"));
        assertThat(NoisyNeighborFigures.of(records, FRAME).chatTtftP99NoiseSec()).isInfinite();
    }

    @Test
    void refusalsAreShed_clientTimeoutsAreNotCuts_aBrokenStreamIs() {
        List<RequestRecord> records = List.of(chat(1, -1, 429, "HTTP 429"), chat(2, -1, 503, "HTTP 503"),
                chat(3, 0.2, 200, "failed: TimeoutException: Total timeout 6000 ms elapsed"),
                chat(4, 0.2, 200, "stream ended without [DONE]"), chat(5, 0.2, 200, null));
        NoisyNeighborFigures f = NoisyNeighborFigures.of(records, FRAME);
        assertThat(f.chatShed()).isEqualTo(2);
        assertThat(f.failed()).isEqualTo(2);
        assertThat(f.cutAfterFirstByte()).isEqualTo(1);
    }

    @Test
    void recovery_isTheEndOfTheLastQuietBinAboveTheLimit() {
        List<RequestRecord> isolated = new ArrayList<>();
        List<RequestRecord> arm = new ArrayList<>();
        List<RequestRecord> neverRecovers = new ArrayList<>();
        for (double t = 20; t < 30; t += 0.5) {
            isolated.add(chat(t, 0.2, 200, null));
            arm.add(chat(t, t < 25 ? 3.0 : 0.21, 200, null)); // slow in the first 5 s bin after the noise only
            neverRecovers.add(chat(t, 0.3, 200, null));
        }
        NoisyNeighborFigures iso = NoisyNeighborFigures.of(isolated, FRAME);
        assertThat(NoisyNeighborFigures.of(arm, FRAME).recoverySec(iso, 1.1, FRAME)).isEqualTo(5.0);
        assertThat(iso.recoverySec(iso, 1.1, FRAME)).isZero();
        assertThat(NoisyNeighborFigures.of(neverRecovers, FRAME).recoverySec(iso, 1.1, FRAME)).isInfinite();
    }

    @Test
    void fairness_sharesAgainstWeights_andJainOnWeightNormalisedService() {
        Map<String, Double> weights = new LinkedHashMap<>();
        weights.put("a", 1.0);
        weights.put("b", 3.0);
        NoisyNeighborFigures.Fairness f = NoisyNeighborFigures.Fairness.fromTotals(Map.of("a", 100.0, "b", 300.0), weights,
                List.of());
        assertThat(f.shares().get("b")).isCloseTo(0.75, within(1e-9));
        assertThat(f.maxShareErrorRelative()).isCloseTo(0.0, within(1e-9));
        assertThat(NoisyNeighborFigures.Fairness.fromTotals(Map.of("a", 200.0, "b", 200.0), weights, List.of())
                .maxShareErrorRelative()).isCloseTo(1.0, within(1e-9)); // a got 0.5 for a target of 0.25
        assertThat(NoisyNeighborFigures.Fairness.jain(new double[] {100, 100})).isCloseTo(1.0, within(1e-12));
        assertThat(NoisyNeighborFigures.Fairness.jain(new double[] {100, 0})).isCloseTo(0.5, within(1e-12));
    }
}
