package io.kvroute.router.dispatch;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The router's outcome listeners: a fixed first one (metrics) and any added later (access log, tracing). */
public final class OutcomeListeners implements OutcomeListener {

    private static final Logger LOG = LoggerFactory.getLogger(OutcomeListeners.class);

    private final List<OutcomeListener> listeners = new CopyOnWriteArrayList<>();

    public OutcomeListeners(OutcomeListener first) {
        listeners.add(Objects.requireNonNull(first, "first"));
    }

    public void add(OutcomeListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public void onOutcome(RequestOutcome outcome) {
        for (OutcomeListener listener : listeners) {
            try {
                listener.onOutcome(outcome);
            } catch (RuntimeException e) {
                LOG.warn("outcome listener {} failed", listener, e);
            }
        }
    }
}
