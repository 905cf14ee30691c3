/**
 * The engine SPI: what a Java engine uses to plug its step loop into kvroute's scheduler.
 *
 * <p>Per step the engine hands its ready list to {@link io.kvroute.scheduler.engine.StepScheduler}
 * and gets back the ordered, budgeted {@link io.kvroute.scheduler.batch.StepBatch}; it reports the
 * batch it actually submitted (batch accounting for HRRN); it answers requests it cannot admit with
 * {@link io.kvroute.scheduler.admission.BusySignal}. To be hosted by the Jetty component
 * ({@code io.kvroute.scheduler.jetty.KvScheduler}) it implements
 * {@link io.kvroute.scheduler.engine.SchedulerEngine}: its load and a view of its queue.
 * Plain Java: no Jetty or ZeroMQ here.
 */
package io.kvroute.scheduler.engine;
