package io.kvroute.scheduler.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrioritiesTest {

    @Test
    void admissionPriority_doesNotRaiseInferencePriority() {
        SchedRequest r = SchedRequest.create("a", 1, 100, 8, true, 0, 0);
        assertThat(r.highPriorityRequest()).isTrue();
        assertThat(r.inferHighPriority()).isZero();
    }

    @Test
    void continuationSegment_getsInferPriorityMinusOneAndAdmissionPriority() {
        SchedRequest r = SchedRequest.create("a", 1, 100, 8, false, 2, 0);
        assertThat(r.highPriorityRequest()).isTrue();
        assertThat(r.inferHighPriority()).isEqualTo(Priorities.CONTINUATION_INFER_PRIORITY).isEqualTo(-1);
    }

    @Test
    void fullPrefixHit_leavesOneTokenAndIsADecodeRequest() {
        // LightLLM's _is_decode_req: cur_kv_len + 1 == total_len (model changed: this was a 1-token prefill)
        SchedRequest r = SchedRequest.create("a", 1, 64, 8, false, 0, 0);
        r.admitWithCachedLen(64);
        assertThat(r.cachedLen()).isEqualTo(63);
        assertThat(r.remainingPrefillTokens()).isEqualTo(1);
        assertThat(r.isDecode()).isTrue();
        SchedRequest twoLeft = SchedRequest.create("b", 2, 64, 8, false, 0, 0);
        twoLeft.admitWithCachedLen(62);
        assertThat(twoLeft.isDecode()).isFalse();
    }
}
