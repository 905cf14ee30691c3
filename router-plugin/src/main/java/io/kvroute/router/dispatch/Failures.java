package io.kvroute.router.dispatch;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.TimeoutException;

/** Classifies upstream transport failures into {@link FailureKind}s. */
public final class Failures {

    private Failures() {}

    /** A timeout anywhere in the cause chain; a connect failure before any response; else a reset. */
    public static FailureKind classify(Throwable failure, boolean responseStarted) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException) {
                return FailureKind.TIMEOUT;
            }
            if (!responseStarted && (t instanceof ConnectException || t instanceof NoRouteToHostException
                    || t instanceof UnresolvedAddressException)) {
                return FailureKind.CONNECT;
            }
        }
        return FailureKind.RESET;
    }

    /** The client status for a failure that ends a request: 503 shutdown/no worker, 504 timeout, 429 busy, else 502. */
    public static int clientStatus(Failure failure) {
        switch (failure.kind()) {
            case SHUTDOWN:
            case NO_WORKER:
                return 503;
            case TIMEOUT:
                return 504;
            case BUSY:
                return 429;
            default:
                return 502;
        }
    }

    static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
