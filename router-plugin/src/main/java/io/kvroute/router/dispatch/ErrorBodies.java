package io.kvroute.router.dispatch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;

/**
 * OpenAI-style error bodies: {@code {"error": {"message", "type", "code", "param"}}}. The same
 * shape goes out as an SSE event when a stream fails after its first byte. Transport-neutral; every
 * adapter writes these bytes.
 */
public final class ErrorBodies {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ErrorBodies() {}

    /** The JSON error body. {@code code} is the HTTP status; {@code param} is null. */
    public static byte[] json(int status, String type, String message) {
        return json(status, type, message, null);
    }

    /** The JSON error body naming the request field it is about ({@code param}: the field path, or null). */
    public static byte[] json(int status, String type, String message, String param) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.put("code", status);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        return root.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The SSE event that ends a failed stream: {@code data: {"error": ...}\n\n}. */
    public static byte[] sseEvent(int status, String type, String message) {
        String event = "data: " + new String(json(status, type, message), StandardCharsets.UTF_8) + "\n\n";
        return event.getBytes(StandardCharsets.UTF_8);
    }

    /** The OpenAI error type conventionally paired with a status. */
    public static String typeFor(int status) {
        switch (status) {
            case 400: return "invalid_request_error";
            case 401: return "authentication_error";
            case 404: return "not_found_error";
            case 405: return "method_not_allowed";
            case 413: return "request_too_large";
            case 415: return "unsupported_media_type";
            case 429: return "server_busy";
            case 502: return "upstream_error";
            case 503: return "service_unavailable";
            case 504: return "upstream_timeout";
            default: return status >= 500 ? "server_error" : "invalid_request_error";
        }
    }
}
