package io.kvroute.scheduler.batch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.scheduler.queue.SchedRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SGLang's mixed-chunk step (PrefillAdder rules). */
class MixedChunkSelectorTest {

    private static long seq;

    private static SchedRequest prefill(String id, int inputLen) {
        SchedRequest r = SchedRequest.create(id, seq++, inputLen, 8, false, 0, 0);
        r.admitWithCachedLen(0);
        return r;
    }

    private static SchedRequest decode(String id) {
        SchedRequest r = prefill(id, 10);
        r.advancePrefill(10);
        r.addOutputToken();
        return r;
    }

    private static List<String> chunks(StepBatch b) {
        return b.prefill().stream().map(c -> c.request().requestId() + ":" + c.tokens()).toList();
    }

    private final MixedChunkSelector sel = new MixedChunkSelector(new BatchBudget(4096, 1024, 256, false));

    @Test
    void decodeTokensAreChargedFirst_andTheRequestThatDoesNotFitIsTruncatedAndClosesTheBatch() {
        StepBatch b = sel.select(List.of(decode("d1"), decode("d2"), prefill("a", 300), prefill("b", 5000),
                prefill("c", 10)), 1 << 20);
        assertThat(b.decode()).hasSize(2);
        // 1024 - 2 decode tokens = 1022: a whole (300), b truncated to 722, c not reached (not skipped over)
        assertThat(chunks(b)).containsExactly("a:300", "b:722");
        assertThat(b.prefillTokens()).isEqualTo(1022);
        assertThat(b.skippedForTokens()).isEqualTo(1);
    }

    @Test
    void theChunkedRequestContinuesFirst_whateverTheStrategyOrder() {
        SchedRequest chunked = prefill("chunked", 3000);
        chunked.advancePrefill(1024);
        StepBatch b = sel.select(List.of(prefill("short", 100), chunked), 1 << 20);
        assertThat(chunks(b)).containsExactly("chunked:1024");
    }

    @Test
    void kvShortage_closesTheBatchInsteadOfSkipping() {
        StepBatch b = sel.select(List.of(prefill("big", 800), prefill("small", 10)), 500);
        assertThat(chunks(b)).isEmpty(); // SGLang: NO_TOKEN breaks; a small request does not overtake
        assertThat(b.skippedForKv()).isEqualTo(2);
    }
}
