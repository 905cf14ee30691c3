package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.worker.Worker;
import java.net.ConnectException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Plain dispatch with a {@link WorkerRoom} (per-worker QoS capacity): the policy sees only the workers with room,
 * the request's tokens follow its choice, a lost placement race is chosen again, and a retry moves the tokens.
 */
class DispatchWorkerRoomTest {

    private final Worker a = Worker.regular("http://a:1");
    private final Worker b = Worker.regular("http://b:1");
    private final Worker c = Worker.regular("http://c:1");

    private final FirstCandidatePolicy first = new FirstCandidatePolicy();
    private final List<List<Worker>> seen = first.seen;

    /** A scripted room: each look returns the next placeable set (the last one repeats); refuses placements as told. */
    private static final class ScriptedRoom implements WorkerRoom {
        final Deque<Set<String>> looks = new ArrayDeque<>();
        int refusals;
        final List<String> placements = new ArrayList<>();

        @Override
        public Set<String> placeable() {
            return looks.size() > 1 ? looks.poll() : looks.peek();
        }

        @Override
        public boolean place(String workerId, boolean force) {
            placements.add(workerId + (force ? " forced" : ""));
            if (!force && refusals > 0) {
                refusals--;
                return false;
            }
            return true;
        }
    }

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of("http://a:1")).retry(SettingsBinder.parse(RetrySettings.class,
                "--retry-max-attempts=3", "--retry-initial-backoff-ms=100", "--retry-jitter=0")).build();
    }

    @Test
    void thePolicySeesOnlyTheWorkersWithRoom_andTheTokensFollowItsChoice() {
        CoreFixture f = new CoreFixture(config(), first);
        ScriptedRoom room = new ScriptedRoom();
        room.looks.add(Set.of(b.id(), c.id()));
        new Dispatch(f.deps, f.plain, f.route(false, a, b, c), new CoreFixture.RecordingSink(), f.clock.nanoTime(), room)
                .start();
        assertThat(seen).containsExactly(List.of(b, c));
        assertThat(room.placements).containsExactly(b.id());
        assertThat(f.upstream.sent.get(0).request.url()).startsWith("http://b:1");
    }

    @Test
    void whenEveryWorkerHasRoom_thePolicyGetsThePoolSnapshotItself() {
        CoreFixture f = new CoreFixture(config(), first);
        ScriptedRoom room = new ScriptedRoom();
        room.looks.add(Set.of(a.id(), b.id(), c.id()));
        Route route = f.route(false, a, b, c);
        new Dispatch(f.deps, f.plain, route, new CoreFixture.RecordingSink(), f.clock.nanoTime(), room).start();
        assertThat(seen).singleElement().isSameAs(route.pool().get());
    }

    @Test
    void aLostPlacementRace_isChosenAgainOnAFreshLook_andForcedAfterTheBound() {
        CoreFixture f = new CoreFixture(config(), first);
        ScriptedRoom room = new ScriptedRoom();
        room.looks.add(Set.of(a.id(), b.id()));
        room.looks.add(Set.of(b.id(), c.id())); // a's room went to another request meanwhile
        room.refusals = 1;
        new Dispatch(f.deps, f.plain, f.route(false, a, b, c), new CoreFixture.RecordingSink(), f.clock.nanoTime(), room)
                .start();
        assertThat(room.placements).containsExactly(a.id(), b.id());
        assertThat(f.upstream.sent.get(0).request.url()).startsWith("http://b:1");

        CoreFixture g = new CoreFixture(config(), first);
        ScriptedRoom racing = new ScriptedRoom();
        racing.looks.add(Set.of(c.id()));
        racing.refusals = Integer.MAX_VALUE; // every look loses its race
        new Dispatch(g.deps, g.plain, g.route(false, a, b, c), new CoreFixture.RecordingSink(), g.clock.nanoTime(), racing)
                .start();
        assertThat(racing.placements).hasSize(WorkerRoom.MAX_PLACEMENTS).last().isEqualTo(c.id() + " forced");
        assertThat(g.upstream.sent).hasSize(1);
    }

    @Test
    void aRetry_movesTheTokens_toAnUntriedWorkerWithRoom_orBackToATriedOneWhenNoneHas() {
        CoreFixture f = new CoreFixture(config(), first);
        ScriptedRoom room = new ScriptedRoom();
        room.looks.add(Set.of(a.id()));
        room.looks.add(Set.of(a.id(), c.id())); // at the retry: b still full, c has room
        room.looks.add(Set.of(a.id(), c.id())); // at the second retry: only tried workers have room
        new Dispatch(f.deps, f.plain, f.route(false, a, b, c), new CoreFixture.RecordingSink(), f.clock.nanoTime(), room)
                .start();
        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        f.clock.forwardMillis(100);
        assertThat(seen.get(1)).containsExactly(c);
        f.upstream.sent.get(1).fail(0, new ConnectException("refused"));
        f.clock.forwardMillis(1_000);
        assertThat(seen.get(2)).as("b is untried but full: back to a tried worker with room").containsExactly(a, c);
        assertThat(room.placements).containsExactly(a.id(), c.id(), a.id());
    }
}
