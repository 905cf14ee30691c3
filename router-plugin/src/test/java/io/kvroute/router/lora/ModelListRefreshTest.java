package io.kvroute.router.lora;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ModelListRefreshTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void workersWithAdapters_everyProbe_othersOncePerInterval() {
        AtomicLong now = new AtomicLong(5 * SECOND);
        ModelListRefresh refresh = new ModelListRefresh(30 * SECOND, now::get);
        assertThat(refresh.due("a", true)).isTrue();
        assertThat(refresh.due("a", true)).isTrue();
        assertThat(refresh.due("b", false)).as("discovery has just read it").isFalse();
        now.addAndGet(29 * SECOND);
        assertThat(refresh.due("b", false)).isFalse();
        now.addAndGet(SECOND);
        assertThat(refresh.due("b", false)).isTrue();
        assertThat(refresh.due("b", false)).as("the interval starts again").isFalse();
        now.addAndGet(30 * SECOND);
        assertThat(refresh.due("b", false)).isTrue();
    }

    @Test
    void zeroNeverReadsWorkersWithoutAdapters_andNegativeIsRefused() {
        AtomicLong now = new AtomicLong();
        ModelListRefresh never = new ModelListRefresh(0, now::get);
        assertThat(never.due("b", false)).isFalse();
        now.addAndGet(1_000_000 * SECOND);
        assertThat(never.due("b", false)).isFalse();
        assertThat(never.due("a", true)).isTrue();
        assertThatThrownBy(() -> new ModelListRefresh(-1, now::get)).isInstanceOf(IllegalArgumentException.class);
    }
}
