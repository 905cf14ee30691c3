package io.kvroute.router.dispatch;

/** Response headers the router adds. */
public final class Headers {

    /** The worker that served the request (PD: the prefill worker). */
    public static final String WORKER = "x-kvroute-worker";
    /** PD: the decode worker that produced the output. */
    public static final String DECODE_URL = "x-kvroute-decode-url";

    private Headers() {}
}
