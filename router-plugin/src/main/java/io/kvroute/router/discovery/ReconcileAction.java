package io.kvroute.router.discovery;

import io.kvroute.router.worker.KvEventsAdvert;
import io.kvroute.router.worker.Worker;
import io.kvroute.router.worker.WorkerRegistry;
import io.kvroute.router.worker.WorkerRole;

/** One step the reconciler asks of the {@link WorkerRegistry}; {@link #applyTo} executes it. */
public sealed interface ReconcileAction {

    String workerId();

    void applyTo(WorkerRegistry registry);

    /** A new worker from a pod that became Ready. */
    record Add(Worker worker) implements ReconcileAction {
        public String workerId() {
            return worker.id();
        }

        public void applyTo(WorkerRegistry registry) {
            registry.add(worker);
        }
    }

    /** Stop new traffic (the pod went NotReady, was deleted or left every selector); in-flight work continues. */
    record Drain(String workerId) implements ReconcileAction {
        public void applyTo(WorkerRegistry registry) {
            registry.drain(workerId);
        }
    }

    /** A draining worker's pod is Ready again before the worker was removed. */
    record Resume(String workerId) implements ReconcileAction {
        public void applyTo(WorkerRegistry registry) {
            registry.resume(workerId);
        }
    }

    /** A label moved the pod to another role, or its bootstrap-port annotation changed. */
    record Update(String workerId, WorkerRole role, Integer bootstrapPort) implements ReconcileAction {
        public void applyTo(WorkerRegistry registry) {
            registry.update(workerId, w -> w.withRole(role, bootstrapPort));
        }
    }

    /**
     * The pod's KV-event annotation was added, changed or removed (or now fails to parse) while its
     * worker stays: the worker takes the endpoints it now names ({@code kvEvents}; null = none), and
     * the KV-event wiring re-subscribes or unsubscribes it. An advert from the worker's own
     * {@code /server_info} wins over any template and is left alone.
     */
    record KvEvents(String workerId, KvEventsAdvert kvEvents) implements ReconcileAction {
        public void applyTo(WorkerRegistry registry) {
            registry.update(workerId, w -> w.withTemplateKvEvents(kvEvents));
        }
    }

    /** A drained worker with nothing in flight (or past its drain deadline) leaves the fleet. */
    record Remove(String workerId) implements ReconcileAction {
        public void applyTo(WorkerRegistry registry) {
            registry.remove(workerId);
        }
    }
}
