/**
 * The ZeroMQ edge shared by the router's subscriber planes: {@link io.kvroute.router.zmq.SubscriberLoop}
 * owns one thread, its sockets, the poller, socket replacement (the JeroMQ handshake-stall workaround) and a
 * clean shutdown. The per-format logic stays in the planes, as pure state machines tested without sockets:
 * {@code load.LoadReportStream} (LoadStat reports) and {@code kvevents.PublisherStream} (KV-event batches).
 */
package io.kvroute.router.zmq;
