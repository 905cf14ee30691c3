/**
 * The open-loop HTTP load generator. Start at {@link io.kvroute.bench.client.OpenLoopClient}: it takes
 * {@link io.kvroute.bench.client.ScheduledRequest}s and returns one
 * {@link io.kvroute.bench.client.RequestRecord} each (scheduled vs actual send time, TTFT, e2e, tokens,
 * usage).
 */
package io.kvroute.bench.client;
