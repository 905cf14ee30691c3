package io.kvroute.router.dispatch;

/** Why an upstream attempt or a client request did not end in success. */
public enum FailureKind {
    /** The worker could not be reached (refused, no route, unresolved). */
    CONNECT,
    /** The request or idle timeout fired. */
    TIMEOUT,
    /** The connection broke for another reason. */
    RESET,
    /** The worker answered 429: busy, try elsewhere or later. */
    BUSY,
    /** The worker answered with a status the router does not relay as success (4xx other than 429, or 5xx). */
    UPSTREAM_STATUS,
    /** A decode worker's body could not be read. */
    BAD_BODY,
    /** The client went away; nothing more can be sent. */
    CLIENT_GONE,
    /** The router is shutting down and aborted the request. */
    SHUTDOWN,
    /** No usable worker (or pair) was left to try. */
    NO_WORKER,
    /** The router could not load the request's LoRA adapter onto the chosen worker (refused or timed out). */
    ADAPTER_LOAD
}
