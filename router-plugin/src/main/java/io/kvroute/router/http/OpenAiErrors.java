package io.kvroute.router.http;

import io.kvroute.router.dispatch.ErrorBodies;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * OpenAI-style error bodies: {@code {"error": {"message", "type", "code", "param"}}}. The same
 * shape goes out as an SSE event when a stream fails after its first byte.
 */
public final class OpenAiErrors {

    private OpenAiErrors() {}

    /** The JSON error body. {@code code} defaults to the HTTP status. */
    public static byte[] body(int status, String type, String message) {
        return ErrorBodies.json(status, type, message);
    }

    /** The SSE event that ends a failed stream: {@code data: {"error": ...}\n\n}. */
    public static ByteBuffer sseEvent(int status, String type, String message) {
        return ByteBuffer.wrap(ErrorBodies.sseEvent(status, type, message));
    }

    /** Writes a complete JSON error response and completes {@code callback}. */
    public static void send(Response response, Callback callback, int status, String type, String message) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body(status, type, message)), callback);
    }

    /** The OpenAI error type conventionally paired with a status. */
    public static String typeFor(int status) {
        return ErrorBodies.typeFor(status);
    }
}
