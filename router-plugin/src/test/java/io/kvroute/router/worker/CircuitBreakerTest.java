package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.CircuitBreaker.State;
import io.kvroute.router.worker.CircuitBreaker.Transition;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {

    private final AtomicLong now = new AtomicLong();
    private final CircuitBreaker breaker = new CircuitBreaker(3, 2, 1_000, now::get);

    @Test
    void opensAfterConsecutiveFailures_notInterleavedOnes() {
        breaker.onFailure();
        breaker.onFailure();
        breaker.onSuccess();
        breaker.onFailure();
        breaker.onFailure();
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.onFailure()).isEqualTo(new Transition(State.CLOSED, State.OPEN));
        assertThat(breaker.allowsTraffic()).isFalse();
    }

    @Test
    void halfOpensAfterCooldown_closesAfterSuccesses_reopensOnFailure() {
        for (int i = 0; i < 3; i++) {
            breaker.onFailure();
        }
        now.set(999);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        now.set(1_000);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.onFailure()).isEqualTo(new Transition(State.HALF_OPEN, State.OPEN));
        now.set(2_000);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.onSuccess()).isNull();
        assertThat(breaker.onSuccess()).isEqualTo(new Transition(State.HALF_OPEN, State.CLOSED));
        assertThat(breaker.allowsTraffic()).isTrue();
    }
}
