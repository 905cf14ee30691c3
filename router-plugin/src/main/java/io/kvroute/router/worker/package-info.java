/**
 * The fleet: {@link io.kvroute.router.worker.Worker} facts, the copy-on-write
 * {@link io.kvroute.router.worker.WorkerRegistry}, health checking and router-local in-flight counts.
 */
package io.kvroute.router.worker;
