package io.kvroute.router.tokenize;

/** The messages use a feature (tool calls, non-string content, ...) the chat encoder does not render exactly. */
public final class UnsupportedChatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UnsupportedChatException(String message) {
        super(message);
    }
}
