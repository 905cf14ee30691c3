package io.kvroute.router.load;

import io.kvroute.router.zmq.SubscriberLoop.Subscription;

/**
 * Load-plane-thread-only state of one worker: one SUB socket per advertised endpoint (none for a
 * scraped worker) and its {@link LoadReportStream}. When the worker advertises one endpoint per rank
 * (SGLang's {@code load_endpoint_port_base + r}), a report's rank is the rank of the socket it came on,
 * whatever its {@code attn_dp_rank} says (SGLang's router does the same; the field may be null). A
 * single endpoint shared by several ranks is keyed by the report's {@code attn_dp_rank}.
 */
final class WorkerSlot {

    /** What a socket is attached to: its worker and which of the worker's endpoints it reads. */
    record Endpoint(WorkerSlot slot, int socketIndex) {}

    final String workerId;
    final String topic;
    final Subscription[] sockets;
    final boolean rankBySocket;
    final LoadReportStream stream;
    /** When a socket of this worker last delivered a message, on the plane's injected clock. */
    long lastMessageNanos;
    /** Position in the plane's state arrays. */
    int index;

    WorkerSlot(String workerId, String topic, int sockets, int dpSize) {
        this.workerId = workerId;
        this.topic = topic;
        this.sockets = new Subscription[sockets];
        this.rankBySocket = sockets == dpSize;
        this.stream = new LoadReportStream(dpSize);
    }
}
