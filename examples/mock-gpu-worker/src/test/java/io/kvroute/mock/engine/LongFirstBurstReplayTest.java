package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Replays the two full-size workloads LightLLM measured its prefill-queue strategies on (the bench's
 * {@code long-first-burst} and {@code interleaved} scenarios) on the H100 preset and a fake clock (no
 * wall time):
 * "long first" (48 x 16384 at 0-47 ms, then 48 x 128 at 60-107 ms) and "interleaved" (192 requests
 * at 500 req/s, one long per three short), output 128 tokens, batch-max-tokens =
 * chunked-prefill-size = 1024, in the {@code lightllm} engine loop. Prints the figures quoted in
 * docs/benchmarks.md (both loops, gate on and off) and checks the directions the seed establishes:
 *
 * <ul>
 *   <li>where the engine sees the queued requests (the router's first-chunk gate off), both new
 *       strategies cut the short-request TTFT median sharply (to under a quarter of default's; the
 *       seed: -77.5 % to -92.7 %), while the long-request TTFT P95 rises by at most 5 % and output
 *       throughput falls by at most 3 % (seed burst round: +0.3..+2.3 %, -0.5..-2.1 %);</li>
 *   <li>with LightLLM's gate modelled, the engine holds only the head of the queue (about one long
 *       prompt at a time), so no strategy can reach the shorts queued behind the longs: the short
 *       median stays within 10 % of default's. This is the model's documented miss of the seed's
 *       figure (docs/benchmarks.md says why).</li>
 * </ul>
 */
class LongFirstBurstReplayTest {

    @ParameterizedTest
    @ValueSource(strings = {"long_first", "interleaved", "long_first_overtaken"})
    void strategies_cutShortTtftSharply_whenTheEngineSeesTheQueue_withinTheSeedsLongAndThroughputBounds(String workload)
            throws Exception {
        for (EngineLoop loop : EngineLoop.values()) {
            for (boolean gate : new boolean[] {true, false}) {
                if (loop == EngineLoop.SGLANG && !gate) {
                    continue; // the sglang loop has no gate
                }
                Result def = replay(workload, "default", loop, gate);
                Result promote = replay(workload, "promote_shortest", loop, gate);
                Result hrrn = replay(workload, "hrrn", loop, gate);
                for (Result r : List.of(def, promote, hrrn)) {
                    System.out.printf("long-first-burst %s --engine-loop %s gate=%s %s: short TTFT median %.0f ms / P95 %.0f ms, "
                            + "long TTFT P95 %.0f ms, output %.1f tok/s (%+.1f%% short median, %+.1f%% long P95, "
                            + "%+.1f%% throughput vs default)%n", workload, loop.flagValue(), gate, r.strategy,
                            r.shortMedian, r.shortP95, r.longP95, r.outputTokPerSec, pct(r.shortMedian, def.shortMedian),
                            pct(r.longP95, def.longP95), pct(r.outputTokPerSec, def.outputTokPerSec));
                }
                if (loop != EngineLoop.LIGHTLLM) {
                    continue;
                }
                for (Result r : List.of(promote, hrrn)) {
                    if (gate) {
                        assertThat(r.shortMedian).as(r.strategy + " short median behind the gate")
                                .isGreaterThan(0.9 * def.shortMedian);
                    } else {
                        assertThat(r.shortMedian).as(r.strategy + " short median").isLessThan(def.shortMedian / 4);
                    }
                    assertThat(r.longP95).as(r.strategy + " long P95").isLessThanOrEqualTo(1.05 * def.longP95);
                    assertThat(r.outputTokPerSec).as(r.strategy + " throughput")
                            .isGreaterThanOrEqualTo(0.97 * def.outputTokPerSec);
                }
            }
        }
    }

    private static double pct(double v, double base) {
        return (v / base - 1) * 100;
    }

    private record Arrival(double atMillis, boolean isLong) {}

    private record Result(String strategy, double shortMedian, double shortP95, double longP95, double outputTokPerSec) {}

    private static List<Arrival> workload(String name) {
        List<Arrival> out = new ArrayList<>();
        if (name.equals("long_first_overtaken")) {
            // long_first in the order the quiet real-time run's worker received it (docs/benchmarks.md): the
            // last 15 longs, slowed by their 16k-id bodies, reached the queue among the first shorts
            for (int i = 0; i < 33; i++) {
                out.add(new Arrival(i, true));
            }
            for (int i = 0; i < 48; i++) {
                out.add(new Arrival(60 + i, false));
            }
            for (int k = 0; k < 15; k++) {
                out.add(new Arrival(61.5 + 3 * k, true));
            }
            out.sort(Comparator.comparingDouble(Arrival::atMillis));
        } else if (name.equals("long_first")) {
            for (int i = 0; i < 48; i++) {
                out.add(new Arrival(i, true));
            }
            for (int i = 0; i < 48; i++) {
                out.add(new Arrival(60 + i, false));
            }
        } else {
            for (int i = 0; i < 192; i++) {
                out.add(new Arrival(i * 2.0, i % 4 == 0));
            }
        }
        return out;
    }

    private static Result replay(String workloadName, String strategy, EngineLoop loop, boolean gate)
            throws InterruptedException {
        FakeClock clock = new FakeClock();
        EngineCore core = new EngineCore(EngineConfig.defaults().withStrategy(strategy).withBudgets(1024, 1024, 256)
                .withTimeModel(TimeModel.h100Small()).withEngineLoop(loop).withFirstChunkGate(gate), clock);
        List<Arrival> arrivals = workload(workloadName);
        List<RecordingSink> sinks = new ArrayList<>();
        int next = 0;
        while (next < arrivals.size() || core.hasWork()) {
            while (next < arrivals.size() && arrivals.get(next).atMillis() <= clock.millis()) {
                Arrival a = arrivals.get(next);
                RecordingSink s = new RecordingSink(clock);
                core.submit(new EngineRequest("r" + next, EngineCoreTest.ids(a.isLong() ? 16384 : 128, next + 1),
                        128, true, false, 0), s);
                sinks.add(s);
                next++;
            }
            if (!core.runOnce() && next < arrivals.size()) {
                clock.advanceMillis(1); // idle until the next arrival
            }
        }
        double[] shortTtft = ttfts(arrivals, sinks, false);
        double[] longTtft = ttfts(arrivals, sinks, true);
        long outputTokens = sinks.stream().mapToLong(s -> s.tokens.size()).sum();
        assertThat(outputTokens).isEqualTo(128L * arrivals.size());
        return new Result(strategy, percentile(shortTtft, 50), percentile(shortTtft, 95), percentile(longTtft, 95),
                outputTokens / (clock.millis() / 1000));
    }

    private static double[] ttfts(List<Arrival> arrivals, List<RecordingSink> sinks, boolean isLong) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < arrivals.size(); i++) {
            if (arrivals.get(i).isLong() == isLong) {
                out.add(sinks.get(i).firstTokenMillis - arrivals.get(i).atMillis());
            }
        }
        double[] a = out.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a;
    }

    /** Nearest-rank percentile of a sorted array (median = mean of the middle two for even sizes). */
    private static double percentile(double[] sorted, int p) {
        if (p == 50 && sorted.length % 2 == 0) {
            return (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }
}
