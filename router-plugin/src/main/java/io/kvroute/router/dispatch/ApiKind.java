package io.kvroute.router.dispatch;

/** The inference APIs the router relays, by the shape of their bodies. */
public enum ApiKind {
    CHAT("/v1/chat/completions"),
    COMPLETIONS("/v1/completions"),
    GENERATE("/generate");

    public final String path;

    ApiKind(String path) {
        this.path = path;
    }
}
