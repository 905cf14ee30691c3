/**
 * The scheduler plugin's Jetty face: {@link io.kvroute.scheduler.jetty.KvScheduler} (mounted with
 * {@code KvScheduler.mount(server, config)}, or by the {@code kvroute-scheduler} jetty-home module)
 * serves {@code /scheduler}, advertises the load-report endpoints in SGLang's {@code kv_events}
 * block of {@code /server_info}, and owns the {@link io.kvroute.scheduler.report.LoadPublisher}.
 */
package io.kvroute.scheduler.jetty;
