package io.kvroute.router.dispatch;

import java.util.PriorityQueue;

/**
 * A manual clock in the style of grpc-java's {@code FakeClock}: time moves only when the test calls
 * {@link #forwardNanos}, and scheduled tasks run then, in due order, on the test's thread. Nothing
 * ever runs inline from {@link #schedule}.
 */
final class FakeClock implements DispatchClock {

    private record Task(long dueNanos, long sequence, Runnable action) {}

    private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) -> a.dueNanos != b.dueNanos
            ? Long.compare(a.dueNanos, b.dueNanos) : Long.compare(a.sequence, b.sequence));
    private long nowNanos = 1_000_000_000L;
    private long sequence;

    @Override
    public synchronized long nanoTime() {
        return nowNanos;
    }

    @Override
    public synchronized void schedule(Runnable task, long delayNanos) {
        tasks.add(new Task(nowNanos + Math.max(0, delayNanos), sequence++, task));
    }

    /** Pending tasks (not yet due or not yet run). */
    synchronized int pendingTasks() {
        return tasks.size();
    }

    /** Advances time and runs every task that became due, including ones they schedule inside the window. */
    void forwardNanos(long nanos) {
        long target;
        synchronized (this) {
            target = nowNanos + nanos;
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.dueNanos > target) {
                    nowNanos = target;
                    return;
                }
                tasks.poll();
                nowNanos = next.dueNanos;
            }
            next.action.run();
        }
    }

    void forwardMillis(long millis) {
        forwardNanos(millis * 1_000_000L);
    }
}
