package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.config.RetrySettings;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.SettingsBinder;
import io.kvroute.router.worker.Worker;
import java.io.IOException;
import java.net.ConnectException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plain dispatch on the core alone: fake clock, scripted upstream, recording client. */
class DispatchTest {

    private static final long MS = 1_000_000L;

    private final Worker a = Worker.regular("http://a:1");
    private final Worker b = Worker.regular("http://b:1");
    private final Worker c = Worker.regular("http://c:1");

    private static RouterConfig config() {
        return RouterConfig.builder().workerUrls(List.of("http://a:1")).retry(SettingsBinder.parse(RetrySettings.class,
                        "--retry-max-attempts=3", "--retry-initial-backoff-ms=100", "--retry-backoff-multiplier=2",
                        "--retry-max-backoff-ms=10000", "--retry-jitter=0")).build();
    }

    @Test
    void firstAttempt_handsThePolicyThePoolSnapshotItself_aRetryTheUntriedRest() {
        FirstCandidatePolicy recording = new FirstCandidatePolicy();
        List<List<Worker>> seen = recording.seen;
        CoreFixture f = new CoreFixture(config(), recording);
        Route route = f.route(false, a, b, c);
        List<Worker> pool = route.pool().get();
        new Dispatch(f.deps, f.plain, route, new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        new Dispatch(f.deps, f.plain, route, new CoreFixture.RecordingSink(), f.clock.nanoTime()).start();
        // the snapshot list itself, not a per-request O(pool) copy (which also defeated CandidateIndex's memo)
        assertThat(seen).hasSize(2).allSatisfy(list -> assertThat(list).isSameAs(pool));

        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        f.clock.forwardMillis(100);
        assertThat(seen).hasSize(3);
        assertThat(seen.get(2)).containsExactly(b, c);
    }

    @Test
    void connectFailure_isRetriedOnAnotherWorkerOnlyAfterTheBackoffElapses() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(false, a, b, c), client, f.clock.nanoTime()).start();
        assertThat(f.upstream.sent).hasSize(1);
        String first = f.upstream.sent.get(0).request.url();
        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));

        f.clock.forwardMillis(99);
        assertThat(f.upstream.sent).as("no retry before the 100 ms backoff").hasSize(1);
        f.clock.forwardMillis(1);
        assertThat(f.upstream.sent).hasSize(2);
        assertThat(f.upstream.sent.get(1).request.url()).isNotEqualTo(first);

        f.upstream.sent.get(1).fail(0, new ConnectException("refused"));
        f.clock.forwardMillis(199);
        assertThat(f.upstream.sent).as("second backoff is 200 ms").hasSize(2);
        f.clock.forwardMillis(1);
        assertThat(f.upstream.sent).hasSize(3);

        CoreFixture.Sent third = f.upstream.sent.get(2);
        third.headers(200, "application/json");
        third.chunk("{\"ok\":true}");
        third.complete(200);
        assertThat(client.status).isEqualTo(200);
        assertThat(client.text()).isEqualTo("{\"ok\":true}");
        assertThat(f.outcomes).singleElement().satisfies(o -> {
            assertThat(o.failure()).isNull();
            assertThat(o.attempts()).isEqualTo(3);
        });
        assertThat(f.active).isEmpty();
    }

    @Test
    void retriesExhausted_endWithA502JsonErrorOnce() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(false, a, b), client, f.clock.nanoTime()).start();
        for (int i = 0; i < 3; i++) {
            f.upstream.sent.get(i).fail(0, new IOException("reset"));
            f.clock.forwardMillis(1_000);
        }
        assertThat(f.upstream.sent).hasSize(3);
        assertThat(client.status).isEqualTo(502);
        assertThat(client.text()).contains("\"type\":\"upstream_error\"");
        assertThat(client.terminalCalls()).isEqualTo(1);
        assertThat(f.outcomes).singleElement().satisfies(o -> assertThat(o.label()).isEqualTo("reset"));
    }

    @Test
    void failureAfterTheFirstByte_isNeverRetried_andEndsTheStreamWithAnSseError() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(true, a, b), client, f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(200, "text/event-stream");
        call.chunk("data: {\"x\":1}\n\n");
        call.fail(200, new IOException("reset mid-stream"));
        f.clock.forwardMillis(10_000);
        assertThat(f.upstream.sent).hasSize(1);
        assertThat(client.text()).startsWith("data: {\"x\":1}\n\n").contains("data: {\"error\"").contains("mid-stream");
        assertThat(client.calls).containsExactly("begin", "write", "end");
    }

    @Test
    void workerClientError_isRelayedVerbatimAndNeverRetried() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(false, a, b), client, f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(400, "application/json");
        call.chunk("{\"error\":{\"message\":\"bad\"}}");
        call.complete(400);
        f.clock.forwardMillis(10_000);
        assertThat(f.upstream.sent).hasSize(1);
        assertThat(client.status).isEqualTo(400);
        assertThat(client.text()).isEqualTo("{\"error\":{\"message\":\"bad\"}}");
    }

    @Test
    void busyAnswer_isDiscardedAndRetried_theLastBusyIsRelayed() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(false, a, b), client, f.clock.nanoTime()).start();
        for (int i = 0; i < 3; i++) {
            CoreFixture.Sent call = f.upstream.sent.get(i);
            call.headers(429, "application/json");
            call.chunk("{\"busy\":" + i + "}");
            call.complete(429);
            f.clock.forwardMillis(1_000);
        }
        assertThat(client.status).isEqualTo(429);
        assertThat(client.text()).isEqualTo("{\"busy\":2}");
    }

    @Test
    void clientGone_abortsTheUpstreamCall_writesNothing_andIsNeverRetried() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        new Dispatch(f.deps, f.plain, f.route(true, a, b), client, f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(200, "text/event-stream");
        client.gone.accept(new IOException("peer closed"));
        assertThat(call.aborted).isNotNull();
        f.clock.forwardMillis(10_000);
        assertThat(f.upstream.sent).hasSize(1);
        assertThat(client.calls).containsExactly("abort");
        assertThat(f.outcomes).singleElement().satisfies(o -> assertThat(o.failure().kind()).isEqualTo(FailureKind.CLIENT_GONE));
        assertThat(f.active).isEmpty();
    }

    @Test
    void backpressure_nextUpstreamChunkIsDemandedOnlyWhenTheClientWriteCompletes() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        client.holdWrites = true;
        new Dispatch(f.deps, f.plain, f.route(true, a), client, f.clock.nanoTime()).start();
        CoreFixture.Sent call = f.upstream.sent.get(0);
        call.headers(200, "text/event-stream");
        List<Boolean> demanded = call.chunk("data: 1\n\n");
        assertThat(demanded).as("no demand while the client write is pending").isEmpty();
        client.heldWrites.get(0).succeeded();
        assertThat(demanded).containsExactly(true);
    }

    @Test
    void drainAbortBetweenAttempts_endsWithA503Once() {
        CoreFixture f = new CoreFixture(config());
        CoreFixture.RecordingSink client = new CoreFixture.RecordingSink();
        Dispatch dispatch = new Dispatch(f.deps, f.plain, f.route(false, a, b), client, f.clock.nanoTime());
        dispatch.start();
        f.upstream.sent.get(0).fail(0, new ConnectException("refused"));
        dispatch.abort("shutting down");
        f.clock.forwardMillis(10_000);
        assertThat(f.upstream.sent).as("the scheduled retry sees the drain and sends nothing").hasSize(1);
        assertThat(client.status).isEqualTo(503);
        assertThat(client.text()).contains("shutting down");
        assertThat(client.terminalCalls()).isEqualTo(1);
        assertThat(f.outcomes).hasSize(1);
    }
}
