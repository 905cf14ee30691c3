package io.kvroute.router.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The per-router pool: none for one thread, threads-1 daemon workers otherwise, stopped on close. */
class SegmentParallelismTest {

    @Test
    void oneThread_isNone_withoutAPool() {
        assertThat(SegmentParallelism.ofThreads(1)).isSameAs(SegmentParallelism.NONE);
        assertThat(SegmentParallelism.NONE.executor()).isNull();
        assertThatThrownBy(() -> SegmentParallelism.ofThreads(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SegmentParallelism.ofThreads(65)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void threads_lendThreadsMinusOneDaemonWorkers_andCloseStopsThem() throws Exception {
        SegmentParallelism p = SegmentParallelism.ofThreads(3);
        ThreadPoolExecutor pool = (ThreadPoolExecutor) p.executor();
        assertThat(pool.getMaximumPoolSize()).isEqualTo(2);
        CountDownLatch ran = new CountDownLatch(1);
        boolean[] daemon = new boolean[1];
        pool.execute(() -> {
            daemon[0] = Thread.currentThread().isDaemon();
            ran.countDown();
        });
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon[0]).isTrue();
        p.close();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
}
