package io.kvroute.mock.engine;

/**
 * Receives one request's output. Exactly one of {@link #onFinish} or {@link #onError} ends the
 * stream. Callbacks must not block the engine thread.
 */
public interface TokenSink {

    /** Called once, when the engine schedules the request's first prefill chunk (it leaves the queue). */
    default void onPrefillStarted() {}

    /** Called once, when the request's prefill is done and its KV prefix-cache hit is known. */
    default void onPrefillDone(int cachedTokens) {}

    /** One generated token. */
    void onToken(int tokenId);

    /** Normal end of generation. {@code reason} is "length" or "stop"; "abort" after abort. */
    void onFinish(String finishReason, Usage usage);

    /** The request failed before or during output (e.g. 429 server_busy from admission). */
    void onError(int httpStatus, String errorType, String message);

    /** Token accounting reported in OpenAI {@code usage}. */
    record Usage(int promptTokens, int completionTokens, int cachedTokens) {}
}
