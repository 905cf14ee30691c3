package io.kvroute.router.dispatch;

/**
 * How one client request ended, reported exactly once per request (metrics, access log, tracing).
 *
 * @param path the endpoint path
 * @param status the status the client got (0 when it went away before one was sent)
 * @param failure why it did not succeed, or null
 * @param durationNanos arrival to terminal transition
 * @param firstByteNanos arrival to the first byte sent to the client, 0 if none
 * @param attempts upstream attempts made (PD: segment attempts)
 * @param segments PD segments (1 without continuations, 0 for plain dispatch)
 * @param workerUrl the worker that served the last attempt (PD: the prefill worker), or null
 * @param decodeUrl PD: the decode worker of the last attempt, else null
 */
public record RequestOutcome(String path, int status, Failure failure, long durationNanos, long firstByteNanos,
        int attempts, int segments, String workerUrl, String decodeUrl) {

    /** The outcome label: {@code ok} or the failure's label. */
    public String label() {
        return failure == null ? "ok" : failure.label();
    }
}
