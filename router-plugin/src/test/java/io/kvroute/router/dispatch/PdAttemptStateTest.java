package io.kvroute.router.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.dispatch.PdAttemptState.Event;
import io.kvroute.router.dispatch.PdAttemptState.Phase;
import io.kvroute.router.dispatch.PdAttemptState.Transition;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The PD attempt machine alone: its named paths, then random event sequences checked step by step against a
 * naive model written from the rules in prose (who decides an attempt, which call is aborted when), not from
 * the transition table.
 */
class PdAttemptStateTest {

    private static PdAttemptState run(Event... events) {
        PdAttemptState state = PdAttemptState.START;
        for (Event event : events) {
            state = state.on(event).to();
        }
        return state;
    }

    @Test
    void prefillOkThenDecodeOk_isDecoded_andAbortsNothing() {
        Transition prefilled = PdAttemptState.START.on(Event.PREFILL_OK);
        assertThat(prefilled.to().phase()).isEqualTo(Phase.PREFILLED);
        assertThat(prefilled.decided()).isFalse();
        Transition streamed = prefilled.to().on(Event.DECODE_STREAMED);
        assertThat(streamed.relays()).isTrue();
        assertThat(streamed.to().streamed()).isTrue();
        Transition decoded = streamed.to().on(Event.DECODE_OK);
        assertThat(decoded.decided()).isTrue();
        assertThat(decoded.to().phase()).isEqualTo(Phase.DECODED);
        assertThat(decoded.abortsPrefill()).isFalse();
        assertThat(decoded.abortsDecode()).isFalse();
    }

    @Test
    void decodeOkBeforeThePrefillAnswers_decides_andTheLatePrefillAnswerChangesNothing() {
        Transition decoded = PdAttemptState.START.on(Event.DECODE_OK);
        assertThat(decoded.decided()).isTrue();
        assertThat(decoded.abortsPrefill()).as("a decoded segment leaves its prefill to finish").isFalse();
        Transition late = decoded.to().on(Event.PREFILL_FAILED);
        assertThat(late.decided()).isFalse();
        assertThat(late.to().phase()).isEqualTo(Phase.DECODED);
        assertThat(late.prefillAbortedByRouter()).isFalse();
    }

    @Test
    void prefillFailure_decides_abortsTheDecodeCall_andTheDecodeEndingAfterwardsIsTrailing() {
        Transition failed = PdAttemptState.START.on(Event.PREFILL_FAILED);
        assertThat(failed.decided()).isTrue();
        assertThat(failed.to().phase()).isEqualTo(Phase.PREFILL_FAILED);
        assertThat(failed.abortsDecode()).isTrue();
        assertThat(failed.abortsPrefill()).isFalse();
        Transition trailing = failed.to().on(Event.DECODE_FAILED);
        assertThat(trailing.decided()).isFalse();
        assertThat(trailing.to().phase()).isEqualTo(Phase.PREFILL_FAILED);
        assertThat(failed.to().on(Event.DECODE_STREAMED).relays()).as("no output of a decided attempt").isFalse();
    }

    @Test
    void decodeFailure_decides_andAbortsThePrefill_whoseFailureIsThenTheRoutersDoing() {
        Transition failed = run(Event.DECODE_STREAMED).on(Event.DECODE_FAILED);
        assertThat(failed.decided()).isTrue();
        assertThat(failed.to().phase()).isEqualTo(Phase.DECODE_FAILED);
        assertThat(failed.to().streamed()).isTrue();
        assertThat(failed.abortsPrefill()).isTrue();
        assertThat(failed.to().on(Event.PREFILL_FAILED).prefillAbortedByRouter()).isTrue();
        Transition afterPrefill = run(Event.PREFILL_OK).on(Event.DECODE_FAILED);
        assertThat(afterPrefill.abortsPrefill()).as("an ended prefill call is not aborted").isFalse();
    }

    @Test
    void clientLeaving_abortsOnlyTheDecode_andTheDecodeEndingDecidesClientGone_fromEveryLiveState() {
        for (PdAttemptState live : List.of(PdAttemptState.START, run(Event.PREFILL_OK), run(Event.DECODE_STREAMED),
                run(Event.PREFILL_OK, Event.DECODE_STREAMED))) {
            Transition left = live.on(Event.CLIENT_LEFT);
            assertThat(left.to().phase()).as("from %s", live).isEqualTo(Phase.LEAVING);
            assertThat(left.decided()).isFalse();
            assertThat(left.abortsDecode()).isTrue();
            assertThat(left.abortsPrefill()).as("the prefill runs on: its KV transfer").isFalse();
            assertThat(left.to().on(Event.CLIENT_LEFT).abortsDecode()).as("aborted once").isFalse();
            assertThat(left.to().on(Event.DECODE_STREAMED).relays()).isFalse();
            if (!live.prefillEnded()) {
                assertThat(left.to().on(Event.PREFILL_FAILED).to().phase()).as("no decision").isEqualTo(Phase.LEAVING);
            }
            for (Event end : List.of(Event.DECODE_OK, Event.DECODE_FAILED)) {
                Transition gone = left.to().on(end);
                assertThat(gone.decided()).isTrue();
                assertThat(gone.to().phase()).isEqualTo(Phase.CLIENT_GONE);
            }
        }
    }

    @Test
    void clientLeavingAfterTheDecision_changesNothing() {
        for (PdAttemptState decided : List.of(run(Event.DECODE_OK), run(Event.DECODE_FAILED), run(Event.PREFILL_FAILED),
                run(Event.ABANDON), run(Event.CLIENT_LEFT, Event.DECODE_FAILED))) {
            Transition left = decided.on(Event.CLIENT_LEFT);
            assertThat(left.to()).isEqualTo(decided);
            assertThat(left.abortsDecode()).isFalse();
            assertThat(left.abortsPrefill()).isFalse();
        }
    }

    @Test
    void abandon_abortsBothRunningCalls_once() {
        Transition abandoned = PdAttemptState.START.on(Event.ABANDON);
        assertThat(abandoned.decided()).isTrue();
        assertThat(abandoned.abortsPrefill()).isTrue();
        assertThat(abandoned.abortsDecode()).isTrue();
        Transition fromLeaving = run(Event.CLIENT_LEFT).on(Event.ABANDON);
        assertThat(fromLeaving.abortsPrefill()).isTrue();
        assertThat(fromLeaving.abortsDecode()).as("already aborted when the client left").isFalse();
        assertThat(abandoned.to().on(Event.ABANDON).abortsPrefill()).isFalse();
    }

    @Test
    void aCallEventAfterThatCallEnded_isRejected() {
        assertThatThrownBy(() -> run(Event.PREFILL_OK, Event.PREFILL_FAILED)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PREFILL_FAILED").hasMessageContaining("PREFILLED");
        assertThatThrownBy(() -> run(Event.DECODE_OK, Event.DECODE_STREAMED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> run(Event.ABANDON, Event.DECODE_FAILED, Event.DECODE_OK))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new PdAttemptState(Phase.PREFILLED, false, false, false))
                .isInstanceOf(IllegalStateException.class);
    }

    /** Random sequences of all events, legal or not: the machine agrees with the naive model after every step. */
    @Test
    void randomEventSequences_matchTheNaiveModel() {
        Event[] events = Event.values();
        for (long seed = 0; seed < 2_000; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            PdAttemptState state = PdAttemptState.START;
            NaiveAttempt model = new NaiveAttempt();
            List<Event> history = new ArrayList<>();
            for (int step = 0; step < 12; step++) {
                Event event = events[random.nextInt(events.length)];
                history.add(event);
                String where = "seed " + seed + " after " + history;
                if (!model.legal(event)) {
                    PdAttemptState before = state;
                    assertThatThrownBy(() -> before.on(event)).as(where).isInstanceOf(IllegalStateException.class);
                    continue;
                }
                Transition t = state.on(event);
                NaiveAttempt.Effects expected = model.apply(event);
                assertThat(t.to().phase()).as(where).isEqualTo(model.phase());
                assertThat(t.to().streamed()).as(where).isEqualTo(model.streamed);
                assertThat(t.decided()).as(where).isEqualTo(expected.decided());
                assertThat(t.relays()).as(where).isEqualTo(expected.relays());
                assertThat(t.abortsPrefill()).as(where).isEqualTo(expected.abortPrefill());
                assertThat(t.abortsDecode()).as(where).isEqualTo(expected.abortDecode());
                assertThat(t.prefillAbortedByRouter()).as(where).isEqualTo(expected.prefillAbortedByRouter());
                state = t.to();
            }
        }
    }

    /**
     * Random runs the way an attempt really goes: each call ends once, an aborted call ends with a failure
     * later, the client and a shutdown may come at any time. Once both calls ended the attempt is decided,
     * and it was decided by exactly one step.
     */
    @Test
    void randomRuns_decideEveryAttemptExactlyOnce_andAbortEachCallAtMostOnce() {
        for (long seed = 0; seed < 2_000; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            PdAttemptState state = PdAttemptState.START;
            int decisions = 0;
            int prefillAborts = 0;
            int decodeAborts = 0;
            List<Event> history = new ArrayList<>();
            while (!(state.prefillEnded() && state.decodeEnded())) {
                List<Event> possible = new ArrayList<>(List.of(Event.CLIENT_LEFT, Event.ABANDON));
                if (!state.prefillEnded()) {
                    possible.add(prefillAborts > 0 ? Event.PREFILL_FAILED : Event.PREFILL_OK);
                    possible.add(Event.PREFILL_FAILED);
                }
                if (!state.decodeEnded()) {
                    possible.add(Event.DECODE_STREAMED);
                    possible.add(decodeAborts > 0 ? Event.DECODE_FAILED : Event.DECODE_OK);
                    possible.add(Event.DECODE_FAILED);
                }
                Event event = possible.get(random.nextInt(possible.size()));
                history.add(event);
                Transition t = state.on(event);
                decisions += t.decided() ? 1 : 0;
                prefillAborts += t.abortsPrefill() ? 1 : 0;
                decodeAborts += t.abortsDecode() ? 1 : 0;
                state = t.to();
                assertThat(prefillAborts).as("seed %d %s", seed, history).isLessThanOrEqualTo(1);
                assertThat(decodeAborts).as("seed %d %s", seed, history).isLessThanOrEqualTo(1);
            }
            assertThat(state.phase().terminal).as("seed %d %s", seed, history).isTrue();
            assertThat(decisions).as("seed %d %s", seed, history).isEqualTo(1);
        }
    }

    /**
     * The rules in prose. The attempt is decided by the first of: the prefill failing while the client is
     * still there, the decode call ending (as the client's departure if the client had left), the router
     * abandoning it. A decision to drop the decode side (prefill failed, client left, abandon) aborts the
     * decode call if it is still running; a decision to drop the prefill side (decode failed, abandon)
     * aborts the prefill call if still running. Output is relayed only while nothing is decided and the
     * client is there.
     */
    private static final class NaiveAttempt {
        record Effects(boolean decided, boolean relays, boolean abortPrefill, boolean abortDecode,
                boolean prefillAbortedByRouter) {}

        Phase decision;
        boolean clientLeft;
        boolean prefillOk;
        boolean prefillEnded;
        boolean decodeEnded;
        boolean streamed;
        boolean prefillAbortIssued;
        boolean decodeAbortIssued;

        boolean legal(Event event) {
            return switch (event) {
                case PREFILL_OK, PREFILL_FAILED -> !prefillEnded;
                case DECODE_OK, DECODE_FAILED, DECODE_STREAMED -> !decodeEnded;
                default -> true;
            };
        }

        Phase phase() {
            if (decision != null) {
                return decision;
            }
            if (clientLeft) {
                return Phase.LEAVING;
            }
            return prefillOk ? Phase.PREFILLED : Phase.RUNNING;
        }

        Effects apply(Event event) {
            boolean undecided = decision == null;
            boolean relays = false;
            boolean abortedByRouter = false;
            switch (event) {
                case PREFILL_OK -> {
                    abortedByRouter = prefillAbortIssued;
                    prefillEnded = true;
                    prefillOk = undecided && !clientLeft;
                }
                case PREFILL_FAILED -> {
                    abortedByRouter = prefillAbortIssued;
                    prefillEnded = true;
                    if (undecided && !clientLeft) {
                        decision = Phase.PREFILL_FAILED;
                    }
                }
                case DECODE_STREAMED -> {
                    relays = undecided && !clientLeft;
                    streamed |= relays;
                }
                case DECODE_OK, DECODE_FAILED -> {
                    decodeEnded = true;
                    if (undecided) {
                        decision = clientLeft ? Phase.CLIENT_GONE
                                : event == Event.DECODE_OK ? Phase.DECODED : Phase.DECODE_FAILED;
                    }
                }
                case CLIENT_LEFT -> clientLeft |= undecided;
                case ABANDON -> {
                    if (undecided) {
                        decision = Phase.ABANDONED;
                    }
                }
            }
            boolean dropsDecode = undecided && (decision == Phase.PREFILL_FAILED || decision == Phase.ABANDONED || clientLeft);
            boolean dropsPrefill = undecided && (decision == Phase.DECODE_FAILED || decision == Phase.ABANDONED);
            boolean abortDecode = dropsDecode && !decodeEnded && !decodeAbortIssued;
            boolean abortPrefill = dropsPrefill && !prefillEnded && !prefillAbortIssued;
            decodeAbortIssued |= abortDecode;
            prefillAbortIssued |= abortPrefill;
            return new Effects(undecided && decision != null, relays, abortPrefill, abortDecode, abortedByRouter);
        }
    }
}
