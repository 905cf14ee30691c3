package io.kvroute.router.worker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The fleet as the router sees it: workers plus their health, published as one immutable
 * {@link Fleet} snapshot through a volatile field. Writers copy-on-write under a short lock, return
 * early when nothing changed, and notify listeners after unlocking (the Armeria
 * DynamicEndpointGroup pattern). Readers on the request path only read the volatile field.
 */
public final class WorkerRegistry {

    /** An immutable view of the fleet. */
    public record Fleet(long version, Map<String, Worker> workers, Map<String, Boolean> healthy,
            java.util.Set<String> draining) {

        public List<Worker> all() {
            return List.copyOf(workers.values());
        }

        /** Workers that may receive traffic now. */
        public List<Worker> routable() {
            List<Worker> out = new ArrayList<>(workers.size());
            for (Worker worker : workers.values()) {
                if (healthy.getOrDefault(worker.id(), Boolean.TRUE) && !draining.contains(worker.id())) {
                    out.add(worker);
                }
            }
            return out;
        }

        public boolean isHealthy(String workerId) {
            return healthy.getOrDefault(workerId, Boolean.TRUE);
        }

        public boolean isDraining(String workerId) {
            return draining.contains(workerId);
        }
    }

    /** Why listeners are called. */
    public enum ChangeKind { ADDED, REMOVED, UPDATED, HEALTH, DRAINING }

    /** A membership or health change, delivered after the new snapshot is visible. */
    public record Change(ChangeKind kind, Worker worker) {}

    private final Object lock = new Object();
    private volatile Fleet fleet = new Fleet(0, Map.of(), Map.of(), java.util.Set.of());
    private final List<Consumer<Change>> listeners = new CopyOnWriteArrayList<>();

    public Fleet fleet() {
        return fleet;
    }

    public Optional<Worker> get(String workerId) {
        return Optional.ofNullable(fleet.workers().get(workerId));
    }

    public void addListener(Consumer<Change> listener) {
        listeners.add(listener);
    }

    public void removeListener(Consumer<Change> listener) {
        listeners.remove(listener);
    }

    /**
     * Blocks until {@code condition} holds for the fleet, woken by change notifications rather than
     * by polling; returns false when it still does not hold after {@code timeout}. For startup code
     * and tools (e.g. waiting for discovery), never for the request path.
     */
    public boolean awaitFleet(Predicate<Fleet> condition, java.time.Duration timeout) throws InterruptedException {
        CompletableFuture<Void> met = new CompletableFuture<>();
        Consumer<Change> listener = change -> {
            if (condition.test(fleet)) {
                met.complete(null);
            }
        };
        listeners.add(listener);
        try {
            if (condition.test(fleet)) { // checked after subscribing, so no change falls in between
                return true;
            }
            met.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("fleet condition failed", e.getCause());
        } finally {
            listeners.remove(listener);
        }
    }

    /** Adds a worker; returns false (and changes nothing) if its id is already present. */
    public boolean add(Worker worker) {
        synchronized (lock) {
            Fleet current = fleet;
            if (current.workers().containsKey(worker.id())) {
                return false;
            }
            Map<String, Worker> workers = new LinkedHashMap<>(current.workers());
            workers.put(worker.id(), worker);
            fleet = new Fleet(current.version() + 1, Map.copyOf(workers), current.healthy(), current.draining());
        }
        notifyListeners(new Change(ChangeKind.ADDED, worker));
        return true;
    }

    public Optional<Worker> remove(String workerId) {
        Worker removed;
        synchronized (lock) {
            Fleet current = fleet;
            removed = current.workers().get(workerId);
            if (removed == null) {
                return Optional.empty();
            }
            Map<String, Worker> workers = new LinkedHashMap<>(current.workers());
            workers.remove(workerId);
            Map<String, Boolean> healthy = new LinkedHashMap<>(current.healthy());
            healthy.remove(workerId);
            java.util.Set<String> draining = new java.util.HashSet<>(current.draining());
            draining.remove(workerId);
            fleet = new Fleet(current.version() + 1, Map.copyOf(workers), Map.copyOf(healthy), java.util.Set.copyOf(draining));
        }
        notifyListeners(new Change(ChangeKind.REMOVED, removed));
        return Optional.of(removed);
    }

    /** Replaces a worker's facts (model id, endpoints); no-op when absent or unchanged. */
    public void update(String workerId, UnaryOperator<Worker> change) {
        Worker updated;
        synchronized (lock) {
            Fleet current = fleet;
            Worker old = current.workers().get(workerId);
            if (old == null) {
                return;
            }
            updated = change.apply(old);
            if (updated.equals(old)) {
                return;
            }
            Map<String, Worker> workers = new LinkedHashMap<>(current.workers());
            workers.put(workerId, updated);
            fleet = new Fleet(current.version() + 1, Map.copyOf(workers), current.healthy(), current.draining());
        }
        notifyListeners(new Change(ChangeKind.UPDATED, updated));
    }

    /** Marks health; no-op (and no notification) when unchanged. */
    public void setHealthy(String workerId, boolean isHealthy) {
        Worker worker;
        synchronized (lock) {
            Fleet current = fleet;
            worker = current.workers().get(workerId);
            if (worker == null || current.isHealthy(workerId) == isHealthy) {
                return;
            }
            Map<String, Boolean> healthy = new LinkedHashMap<>(current.healthy());
            healthy.put(workerId, isHealthy);
            fleet = new Fleet(current.version() + 1, current.workers(), Map.copyOf(healthy), current.draining());
        }
        notifyListeners(new Change(ChangeKind.HEALTH, worker));
    }

    /** Stops new traffic to a worker (in-flight work continues); no-op when absent or already draining. */
    public boolean drain(String workerId) {
        Worker worker;
        synchronized (lock) {
            Fleet current = fleet;
            worker = current.workers().get(workerId);
            if (worker == null || current.draining().contains(workerId)) {
                return worker != null;
            }
            java.util.Set<String> draining = new java.util.HashSet<>(current.draining());
            draining.add(workerId);
            fleet = new Fleet(current.version() + 1, current.workers(), current.healthy(), java.util.Set.copyOf(draining));
        }
        notifyListeners(new Change(ChangeKind.DRAINING, worker));
        return true;
    }

    /** Lets a draining worker take new traffic again (a discovered pod turned Ready again); no-op otherwise. */
    public boolean resume(String workerId) {
        Worker worker;
        synchronized (lock) {
            Fleet current = fleet;
            worker = current.workers().get(workerId);
            if (worker == null || !current.draining().contains(workerId)) {
                return false;
            }
            java.util.Set<String> draining = new java.util.HashSet<>(current.draining());
            draining.remove(workerId);
            fleet = new Fleet(current.version() + 1, current.workers(), current.healthy(), java.util.Set.copyOf(draining));
        }
        notifyListeners(new Change(ChangeKind.DRAINING, worker));
        return true;
    }

    private void notifyListeners(Change change) {
        for (Consumer<Change> listener : listeners) {
            listener.accept(change);
        }
    }
}
