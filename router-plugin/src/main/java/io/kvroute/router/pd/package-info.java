/**
 * Prefill/decode disaggregation, the pure parts: the bootstrap rendezvous injected into bodies
 * ({@link io.kvroute.router.pd.BootstrapInjector}) and continuation segments
 * ({@link io.kvroute.router.pd.Continuation}). The HTTP orchestration lives in
 * {@code io.kvroute.router.dispatch.PdDispatch}.
 */
package io.kvroute.router.pd;
