package io.kvroute.router.dispatch;

/**
 * What {@link RetryRule} needs to know about an attempt that just ended.
 *
 * @param attempt 1-based number of the attempt that ended
 * @param failure why it failed, or null when it succeeded
 * @param clientSawBytes true once any byte of the response reached the client
 * @param clientGone true once the client went away
 * @param shuttingDown true once the router is aborting in-flight requests
 * @param continuation true for a PD continuation segment (the pair is fixed, output was produced)
 * @param startNanos when the client request arrived ({@link DispatchClock#nanoTime()})
 * @param nowNanos now, on the same clock
 */
public record AttemptFacts(int attempt, Failure failure, boolean clientSawBytes, boolean clientGone,
        boolean shuttingDown, boolean continuation, long startNanos, long nowNanos) {}
