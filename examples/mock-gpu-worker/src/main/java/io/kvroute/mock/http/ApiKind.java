package io.kvroute.mock.http;

/** The three generation APIs a real SGLang worker speaks, and their output shapes. */
enum ApiKind {
    CHAT("/v1/chat/completions"),
    COMPLETIONS("/v1/completions"),
    GENERATE("/generate");

    final String path;

    ApiKind(String path) {
        this.path = path;
    }

    static ApiKind forPath(String path) {
        for (ApiKind kind : values()) {
            if (kind.path.equals(path)) {
                return kind;
            }
        }
        return null;
    }
}
