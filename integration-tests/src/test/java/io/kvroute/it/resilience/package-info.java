/**
 * Resilience tests and fault drills: retries, breakers, timeouts, graceful drain, the admin API,
 * input fuzzing, and drills that kill, restart and slow down real in-process workers and clients on
 * loopback. Start with {@link io.kvroute.it.resilience.Fleet} (router plus workers),
 * {@link io.kvroute.it.resilience.ScriptedWorker} (a worker whose answers a test dictates) and
 * {@link io.kvroute.it.resilience.Client}.
 */
package io.kvroute.it.resilience;
