/**
 * The engine SPI: what a Java engine uses to plug its step loop into kvroute's scheduler.
 *
 * <p>Per step the engine hands its ready list to {@link io.kvroute.scheduler.engine.StepScheduler}
 * and gets back the ordered, budgeted {@link io.kvroute.scheduler.batch.StepBatch}, shaped by its
 * {@link io.kvroute.scheduler.engine.StepLoop} (LightLLM's prefill-or-decode pass with its
 * first-chunk entry gate, or SGLang's mixed pass); it stamps requests with its arrival order on
 * admission; it reports the
 * batch it actually submitted (batch accounting for HRRN); it answers requests it cannot admit with
 * {@link io.kvroute.scheduler.admission.BusySignal}. To be hosted by the Jetty component
 * ({@code io.kvroute.scheduler.jetty.KvScheduler}) it implements
 * {@link io.kvroute.scheduler.engine.SchedulerEngine}: its load, a view of its queue, whether its
 * loop is alive (a dead one gets no more load reports) and its KV block size.
 * Plain Java: no Jetty or ZeroMQ here.
 */
package io.kvroute.scheduler.engine;
