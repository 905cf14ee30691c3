/**
 * The simulated engine behind the mock GPU worker. {@link io.kvroute.mock.engine.Engine} is the
 * contract the HTTP layer uses; {@link io.kvroute.mock.engine.ScheduledEngine} is the real engine
 * loop (one thread, the scheduler plugin's strategies, budgets and admission, a KV pool with a
 * page-granular {@link io.kvroute.mock.engine.PrefixCache}, and {@link
 * io.kvroute.mock.engine.TimeModel} step times). Start reading at {@code EngineCore#runOnce}.
 * Presets and modelling choices are documented in docs/scheduler.md.
 */
package io.kvroute.mock.engine;
