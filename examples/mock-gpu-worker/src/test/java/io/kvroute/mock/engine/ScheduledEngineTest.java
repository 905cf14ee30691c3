package io.kvroute.mock.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ScheduledEngineTest {

    @Test
    void engineThread_runsSubmittedRequestsToCompletionOnAFakeClock() throws Exception {
        FakeClock clock = new FakeClock();
        List<EngineStats> steps = new CopyOnWriteArrayList<>();
        try (ScheduledEngine engine = ScheduledEngine.start(EngineConfig.defaults().withStrategy("hrrn")
                .withTimeModel(TimeModel.h100Small()), clock)) {
            engine.addStepListener(steps::add);
            List<RecordingSink> sinks = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                RecordingSink s = new RecordingSink(clock);
                engine.submit(new EngineRequest("r" + i, EngineCoreTest.ids(500 + 100 * i, i), 20, true, false, 0), s);
                sinks.add(s);
            }
            for (RecordingSink s : sinks) {
                assertThat(s.ended.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(s.tokens).hasSize(20);
            }
            assertThat(engine.info().prefillQueueStrategy()).isEqualTo("hrrn");
            assertThat(engine.stats().processedPrefillTokens()).isEqualTo(8 * 500 + 100 * 28);
            assertThat(steps).isNotEmpty();
            assertThat(engine.schedulerView()).containsKeys("waiting", "running", "counters", "strategy");
        }
    }

    @Test
    void close_endsOutstandingRequestsWithAbort() throws Exception {
        ScheduledEngine engine = ScheduledEngine.start(EngineConfig.defaults()
                .withTimeModel(TimeModel.fast().withSpeedup(0.01))); // real clock, 500 ms decode steps
        RecordingSink running = new RecordingSink(new FakeClock());
        engine.submit(new EngineRequest("slow", EngineCoreTest.ids(16, 1), 1000, true, false, 0), running);
        engine.close();
        assertThat(running.ended.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(running.finishReason).isEqualTo("abort");
        assertThatThrownBy(() -> engine.submit(new EngineRequest("late", EngineCoreTest.ids(16, 2), 1, true, false, 0),
                new RecordingSink(new FakeClock()))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void config_rejectsBadValuesNamingTheFlag() {
        assertThatThrownBy(() -> EngineConfig.defaults().withStrategy("lifo"))
                .hasMessageContaining("prefill-queue-strategy").hasMessageContaining("default, promote_shortest, hrrn");
        assertThatThrownBy(() -> EngineConfig.defaults().withBudgets(0, 1, 1)).hasMessageContaining("batch-max-tokens");
        assertThatThrownBy(() -> EngineConfig.defaults().withKv(1000, 0)).hasMessageContaining("page-size");
        assertThatThrownBy(() -> TimeModel.preset("tpu")).hasMessageContaining("h100-small");
        assertThat(TimeModel.preset("seed003")).as("the preset's former name still works")
                .isEqualTo(TimeModel.preset("sglang-long-context")).isEqualTo(TimeModel.sglangLongContext());
        assertThat(io.kvroute.mock.http.TokenizeCost.forName("seed003"))
                .isEqualTo(io.kvroute.mock.http.TokenizeCost.forName("sglang-long-context"));
        assertThat(EngineConfig.defaults().resourceWaitTimeoutSecs()).isEqualTo(20);
        assertThat(EngineConfig.defaults().nodeSelfRequestLimit()).isTrue();
    }
}
