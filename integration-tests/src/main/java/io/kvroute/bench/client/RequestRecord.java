package io.kvroute.bench.client;

/**
 * What happened to one scheduled request. All instants are wall-clock nanoseconds since the run
 * started, {@code -1} when the event never happened.
 *
 * <p>Lateness = {@code sentNanos - scheduledNanos}, where "sent" is the moment the request headers
 * were committed to the connection (so client-side queueing for a connection counts as lateness).
 * TTFT and e2e are measured from "sent"; TPOT = (e2e - ttft) / (outputTokens - 1).
 *
 * @param index position in the scheduled list
 * @param dispatchedNanos when a dispatch thread began handing the request to the HTTP client
 * @param status HTTP status, 0 when no response arrived
 * @param error null when the request succeeded (HTTP 200 and a complete, error-free body)
 * @param outputTokens {@code usage.completion_tokens} when reported, else the number of content chunks
 * @param promptTokens {@code usage.prompt_tokens}, 0 when absent
 * @param cachedTokens {@code usage.prompt_tokens_details.cached_tokens}, 0 when absent
 */
public record RequestRecord(
        int index,
        String requestClass,
        String tag,
        long scheduledNanos,
        long dispatchedNanos,
        long sentNanos,
        long firstTokenNanos,
        long lastTokenNanos,
        long endNanos,
        int status,
        String error,
        long outputTokens,
        long promptTokens,
        long cachedTokens) {

    public boolean ok() {
        return error == null && status == 200;
    }

    /** Send lateness against the schedule in nanoseconds; NaN when never sent. */
    public double latenessNanos() {
        return sentNanos < 0 ? Double.NaN : sentNanos - scheduledNanos;
    }

    /** Time to first token in nanoseconds; NaN when unknown. */
    public double ttftNanos() {
        return sentNanos < 0 || firstTokenNanos < 0 ? Double.NaN : firstTokenNanos - sentNanos;
    }

    /** Send to end of response in nanoseconds; NaN when unknown. */
    public double e2eNanos() {
        return sentNanos < 0 || endNanos < 0 ? Double.NaN : endNanos - sentNanos;
    }

    /** Time per output token after the first, in nanoseconds; NaN with fewer than 2 output tokens. */
    public double tpotNanos() {
        if (outputTokens < 2) {
            return Double.NaN;
        }
        return (e2eNanos() - ttftNanos()) / (outputTokens - 1);
    }
}
