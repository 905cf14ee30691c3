package io.kvroute.router.dispatch;

/** Where dispatches register while in flight, so a drain can wait for or abort them. */
public interface InFlightRequests {

    void add(Abortable request);

    void remove(Abortable request);
}
