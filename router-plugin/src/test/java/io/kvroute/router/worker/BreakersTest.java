package io.kvroute.router.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.worker.CircuitBreaker.State;
import io.kvroute.router.worker.CircuitBreaker.Transition;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BreakersTest {

    private final AtomicLong now = new AtomicLong();
    private final List<String> reported = new ArrayList<>();
    private final Breakers breakers = new Breakers(true, 2, 1, 1_000, now::get,
            (id, t) -> reported.add(id + ":" + t.from() + "->" + t.to()));

    /**
     * Regression: the cool-down ending (OPEN → HALF_OPEN) happens lazily inside whichever call
     * comes next, and used to be reported by none of them, so the transitions metric never showed
     * a breaker going half-open.
     */
    @Test
    void everyTransitionIsReportedOnce_theLazyHalfOpenIncluded() {
        breakers.onFailure("w");
        breakers.onFailure("w");
        assertThat(breakers.allowsTraffic("w")).isFalse();
        now.addAndGet(1_000);
        assertThat(breakers.allowsTraffic("w")).isTrue();
        assertThat(breakers.state("w")).isEqualTo(State.HALF_OPEN);
        breakers.onFailure("w");
        now.addAndGet(1_000);
        breakers.onSuccess("w"); // the cool-down ends inside this call, then the trial success closes
        assertThat(reported).containsExactly("w:CLOSED->OPEN", "w:OPEN->HALF_OPEN", "w:HALF_OPEN->OPEN",
                "w:OPEN->HALF_OPEN", "w:HALF_OPEN->CLOSED");
    }

    @Test
    void takeHalfOpen_returnsTheMoveOnlyOnce() {
        CircuitBreaker breaker = new CircuitBreaker(1, 1, 10, now::get);
        breaker.onFailure();
        assertThat(breaker.takeHalfOpen()).isNull();
        now.addAndGet(10);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.takeHalfOpen()).isEqualTo(new Transition(State.OPEN, State.HALF_OPEN));
        assertThat(breaker.takeHalfOpen()).isNull();
    }

    @Test
    void disabledBreakers_alwaysAllowTraffic_andReportNothing() {
        Breakers off = new Breakers(false, 1, 1, 1_000, now::get, (id, t) -> reported.add("unexpected"));
        off.onFailure("w");
        off.onFailure("w");
        assertThat(off.allowsTraffic("w")).isTrue();
        assertThat(off.state("w")).isEqualTo(State.CLOSED);
        assertThat(reported).isEmpty();
    }
}
