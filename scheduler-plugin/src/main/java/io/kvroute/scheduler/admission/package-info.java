/**
 * Engine admission: the node self request limit (request slots and KV reservations), the
 * resource-wait timeout and the busy signal (HTTP 429, error type {@code server_busy}, sent before
 * any output). Start with {@link io.kvroute.scheduler.admission.AdmissionGate}. Plain Java with an
 * injected nano clock; engine thread only.
 */
package io.kvroute.scheduler.admission;
