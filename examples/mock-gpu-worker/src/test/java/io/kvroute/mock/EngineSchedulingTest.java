package io.kvroute.mock;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.mock.engine.EngineStats;
import io.kvroute.scheduler.engine.SchedulerEngine;
import io.kvroute.protocol.LoadStat;
import org.junit.jupiter.api.Test;

/**
 * The mock engine's load as the scheduler plugin publishes it: {@code num_tokens}
 * is KV in use, the extension's {@code num_total_tokens} adds admission reservations not yet
 * computed, so a worker whose KV is all reserved is busy although little is in use yet.
 */
class EngineSchedulingTest {

    @Test
    void loadStat_totalTokensIncludeReservations_andDriveTheBusySignal() {
        // 1,000 tokens in use, 3,000 more reserved by admitted requests, capacity 4,000
        EngineStats stats = new EngineStats(2, 1, 1_000, 4_000, 4_000, 500, 7, 9, 0, 3);
        LoadStat load = EngineScheduling.toLoadStat(stats, 8, 2);
        assertThat(load.numTokens()).isEqualTo(1_000);
        assertThat(load.ext().numTotalTokens()).isEqualTo(4_000);
        assertThat(load.numWaitingReqs()).as("KV transfers waiting count as waiting").isEqualTo(3);
        assertThat(load.ext().maxRunningRequests()).isEqualTo(8);
        assertThat(SchedulerEngine.busy(load)).as("KV full with reservations").isTrue();
    }
}
