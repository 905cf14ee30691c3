package io.kvroute.scheduler.report;

/**
 * The wire shape a {@link KvEventPublisher} speaks. Both engines share the live frames
 * {@code [topic, seq, payload]} and the batch {@code [ts, [events...], rank]}; they differ in the
 * events, the replay answers and the heartbeat.
 */
public enum KvEventFormat {
    /**
     * SGLang ({@code python/sglang/srt/disaggregation/kv_events.py}): tagged-array events, replay
     * answers {@code [b"", seq, payload]} ending {@code [b"", END, b""]}; kvroute's engines add an
     * empty heartbeat batch after a quiet period.
     */
    SGLANG,
    /**
     * vLLM ({@code vllm/distributed/kv_events.py}): events as maps tagged by {@code type} with
     * vLLM's field order and defaults left out, block hashes as uint64, replay answers with the
     * topic frame {@code [b"", topic, seq, payload]} ending {@code [b"", b"", END, b""]}, and no
     * heartbeat: a batch goes out only when the step produced events.
     */
    VLLM
}
