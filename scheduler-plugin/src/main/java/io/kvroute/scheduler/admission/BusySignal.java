package io.kvroute.scheduler.admission;

/** The busy answer: LightLLM's ServerBusyError is an HTTP 429 that PD masters may retry. */
public final class BusySignal {

    public static final int HTTP_STATUS = 429;
    public static final String ERROR_TYPE = "server_busy";

    private BusySignal() {}

    public static String message(String requestId, long waitedMillis) {
        return "server busy: no request slot or KV for request " + requestId + " within " + waitedMillis + " ms";
    }
}
