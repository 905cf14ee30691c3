package io.kvroute.mock.pd;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The prefill side of the simulated KV transfer: one future per {@code bootstrap_room}, completed
 * with the prompt's token count when the prefill finishes (or failed when it fails). The decode
 * worker that joins the same room long-polls {@code GET /kv/{room}} on this worker's bootstrap port
 * and receives the "KV" after a transfer time proportional to the tokens. Whichever side arrives
 * first creates the room; a room is forgotten a while after it completes.
 */
public final class KvRendezvous {

    /** How long a completed room stays claimable (a decode may arrive late). */
    private static final long ROOM_TTL_SECONDS = 120;

    private final Map<Long, CompletableFuture<Integer>> rooms = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timers;

    public KvRendezvous(ScheduledExecutorService timers) {
        this.timers = timers;
    }

    public CompletableFuture<Integer> room(long room) {
        return rooms.computeIfAbsent(room, r -> {
            CompletableFuture<Integer> future = new CompletableFuture<>();
            future.whenComplete((v, e) -> timers.schedule(() -> rooms.remove(r), ROOM_TTL_SECONDS, TimeUnit.SECONDS));
            return future;
        });
    }

    /** The prefill for {@code room} finished: its KV ({@code tokens} long) can be transferred. */
    public void ready(long room, int tokens) {
        room(room).complete(tokens);
    }

    /** The prefill for {@code room} failed or was aborted. */
    public void failed(long room, String reason) {
        room(room).completeExceptionally(new IllegalStateException(reason));
    }

    public int openRooms() {
        return rooms.size();
    }
}
