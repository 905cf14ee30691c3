package io.kvroute.router.dispatch;

/**
 * The state machine of one PD attempt: one prefill call and one decode call, sent together for one
 * segment on one pair (SGLang's PD router, {@code sgl-router/src/routers/http/pd_router.rs}, sends
 * the same pair of requests). Every state and every transition is named here; {@link PdAttempt}
 * holds the current state and {@link PdDispatch} acts on the {@link Transition}s it is handed.
 *
 * <p>A state is a {@link Phase} plus what is known of the two calls: whether each has ended (an
 * upstream call ends exactly once) and whether any decode output reached the client. The phases
 * and the only transitions between them ({@link #on} rejects any other):
 * <pre>
 *   RUNNING   --PREFILL_OK-->     PREFILLED       the decode call alone decides now
 *   RUNNING   --PREFILL_FAILED--> PREFILL_FAILED  decided: abort decode; busy, relay or retry
 *   RUNNING, PREFILLED --DECODE_OK-->     DECODED        decided: segment done (continue or answer)
 *   RUNNING, PREFILLED --DECODE_FAILED--> DECODE_FAILED  decided: abort prefill; busy, relay or retry
 *   RUNNING, PREFILLED --CLIENT_LEFT-->   LEAVING        abort decode; the prefill runs on (KV transfer)
 *   LEAVING   --DECODE_OK | DECODE_FAILED--> CLIENT_GONE  decided: end the exchange, writing nothing
 *   RUNNING, PREFILLED, LEAVING --ABANDON--> ABANDONED   decided by the router: abort both calls
 * </pre>
 * {@code DECODE_STREAMED} (a decode chunk has visible output) keeps the phase; it is relayed only
 * from RUNNING or PREFILLED. Once decided (a terminal phase) the attempt never moves again: the
 * other call's late completion only records that it ended, so racing endings (the prefill fails
 * while the decode fails, a shutdown, the client leaving) decide an attempt exactly once.
 * A call event after that call ended is illegal (an {@link IllegalStateException}), as are states
 * the invariants in the constructor exclude.
 *
 * <p>Immutable and pure: no clock, no I/O, no locks.
 *
 * @param phase where the attempt is
 * @param prefillEnded the prefill call completed (any outcome)
 * @param decodeEnded the decode call completed (any outcome)
 * @param streamed some decode output of this attempt was relayed to the client (no retry from then on)
 */
record PdAttemptState(Phase phase, boolean prefillEnded, boolean decodeEnded, boolean streamed) {

    /** A fresh attempt: both calls about to be sent. */
    static final PdAttemptState START = new PdAttemptState(Phase.RUNNING, false, false, false);

    PdAttemptState {
        boolean consistent = switch (phase) {
            case RUNNING -> !prefillEnded && !decodeEnded;
            case PREFILLED -> prefillEnded && !decodeEnded;
            case LEAVING -> !decodeEnded;
            case PREFILL_FAILED -> prefillEnded;
            case DECODED, DECODE_FAILED, CLIENT_GONE -> decodeEnded;
            case ABANDONED -> true;
        };
        if (!consistent) {
            throw new IllegalStateException("impossible PD attempt state: " + phase + " prefillEnded=" + prefillEnded
                    + " decodeEnded=" + decodeEnded);
        }
    }

    /** Where an attempt is. The flags say what entering the phase does to the calls still running. */
    enum Phase {
        /** Both calls in flight (or being sent); nothing decided. */
        RUNNING(false, false, false, true),
        /** The prefill call answered 2xx; the decode call decides the attempt. */
        PREFILLED(false, false, false, true),
        /** The client went away: the decode call is aborted, the prefill call runs on so its KV transfer completes. */
        LEAVING(false, false, true, false),
        /** The decode call ended 200: the segment is done. */
        DECODED(true, false, false, false),
        /** The decode call failed or answered non-200: the prefill call is aborted. */
        DECODE_FAILED(true, true, false, false),
        /** The prefill call failed or answered non-2xx before the decode call ended: the decode call is aborted. */
        PREFILL_FAILED(true, false, true, false),
        /** The decode call ended after the client left: the exchange ends without a write. */
        CLIENT_GONE(true, false, false, false),
        /** The router gave up on the attempt (shutdown, an unexpected relay error): both calls are aborted. */
        ABANDONED(true, true, true, false);

        final boolean terminal;
        final boolean abortsPrefill;
        final boolean abortsDecode;
        final boolean relays;

        Phase(boolean terminal, boolean abortsPrefill, boolean abortsDecode, boolean relays) {
            this.terminal = terminal;
            this.abortsPrefill = abortsPrefill;
            this.abortsDecode = abortsDecode;
            this.relays = relays;
        }
    }

    /** What can happen to an attempt. */
    enum Event {
        /** The prefill call ended with a 2xx answer. */
        PREFILL_OK,
        /** The prefill call ended otherwise (transport failure, 429, any other status). */
        PREFILL_FAILED,
        /** A decode chunk produced output for the client. */
        DECODE_STREAMED,
        /** The decode call ended 200. */
        DECODE_OK,
        /** The decode call ended otherwise. */
        DECODE_FAILED,
        /** The client went away. */
        CLIENT_LEFT,
        /** The router gives up on the attempt. */
        ABANDON
    }

    /** The one transition method: the step {@code event} makes from this state, or an exception if it cannot happen. */
    Transition on(Event event) {
        boolean prefillCall = event == Event.PREFILL_OK || event == Event.PREFILL_FAILED;
        boolean decodeCall = event == Event.DECODE_OK || event == Event.DECODE_FAILED || event == Event.DECODE_STREAMED;
        if (prefillCall && prefillEnded || decodeCall && decodeEnded) {
            throw new IllegalStateException(event + " after that call ended, in " + this);
        }
        boolean relayed = event == Event.DECODE_STREAMED && phase.relays;
        PdAttemptState to = new PdAttemptState(target(event),
                prefillEnded || prefillCall,
                decodeEnded || event == Event.DECODE_OK || event == Event.DECODE_FAILED,
                streamed || relayed);
        return new Transition(this, to, event);
    }

    private Phase target(Event event) {
        if (phase.terminal) {
            return phase; // decided: a late completion or signal changes nothing
        }
        return switch (event) {
            case PREFILL_OK -> phase == Phase.RUNNING ? Phase.PREFILLED : phase;
            case PREFILL_FAILED -> phase == Phase.RUNNING ? Phase.PREFILL_FAILED : phase;
            case DECODE_STREAMED -> phase;
            case DECODE_OK -> phase == Phase.LEAVING ? Phase.CLIENT_GONE : Phase.DECODED;
            case DECODE_FAILED -> phase == Phase.LEAVING ? Phase.CLIENT_GONE : Phase.DECODE_FAILED;
            case CLIENT_LEFT -> Phase.LEAVING;
            case ABANDON -> Phase.ABANDONED;
        };
    }

    /**
     * One step of an attempt, and what the holder must do after publishing it.
     *
     * @param from the state before
     * @param to the state after
     * @param event what happened
     */
    record Transition(PdAttemptState from, PdAttemptState to, Event event) {

        /** This step decided the attempt (exactly one step of an attempt does). */
        boolean decided() {
            return !from.phase.terminal && to.phase.terminal;
        }

        /** This step entered {@code phase}. */
        boolean entered(Phase phase) {
            return from.phase != phase && to.phase == phase;
        }

        /** The decode chunk of this {@code DECODE_STREAMED} goes to the client. */
        boolean relays() {
            return event == Event.DECODE_STREAMED && from.phase.relays;
        }

        /** The prefill call is still running and must be aborted now (once per attempt). */
        boolean abortsPrefill() {
            return !to.prefillEnded && to.phase.abortsPrefill && !from.phase.abortsPrefill;
        }

        /** The decode call is still running and must be aborted now (once per attempt). */
        boolean abortsDecode() {
            return !to.decodeEnded && to.phase.abortsDecode && !from.phase.abortsDecode;
        }

        /** This prefill completion follows the router's own abort: its failure says nothing about the worker. */
        boolean prefillAbortedByRouter() {
            return (event == Event.PREFILL_OK || event == Event.PREFILL_FAILED) && from.phase.abortsPrefill;
        }
    }
}
