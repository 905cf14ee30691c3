/**
 * The engine load plane: SGLang-compatible load reports received over ZeroMQ SUB, per-rank
 * freshness, and the immutable {@link io.kvroute.router.load.EngineLoadSnapshot} a request captures
 * once at ingress.
 *
 * <p>Start reading at {@link io.kvroute.router.load.LoadPlane} (membership and the published table, on
 * the shared {@link io.kvroute.router.zmq.SubscriberLoop}) and
 * {@link io.kvroute.router.load.LoadReportStream} (one worker's reports: seq, gaps, restarts), then
 * {@link io.kvroute.router.load.EngineLoadSnapshot} (what policies read) and
 * {@link io.kvroute.router.load.PrefillPressure} / {@link io.kvroute.router.load.DecodePressure}
 * ({@code compare_prefill_pressure} of SGLang {@code experimental/sgl-router/src/policies/admission.rs}).
 * {@link io.kvroute.router.load.DirectLoadTable} is the same table fed by its caller, without sockets
 * (the bench's virtual-time fleet). Everything except {@code LoadPlane} and {@code WorkerSlot} is plain Java
 * with an injected clock. Wire format: {@code docs/load-report-protocol.md}.
 */
package io.kvroute.router.load;
