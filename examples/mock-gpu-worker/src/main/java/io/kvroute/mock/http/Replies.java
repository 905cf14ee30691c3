package io.kvroute.mock.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** The mock's JSON answers: OpenAI-shaped error bodies ({@code {"error": {message, type, code}}}) and plain JSON. */
final class Replies {

    static final ObjectMapper JSON = new ObjectMapper();

    private Replies() {}

    static ByteBuffer utf8(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    static String errorBody(int status, String type, String message) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.put("code", status);
        return root.toString();
    }

    static void error(Response response, Callback callback, int status, String type, String message) {
        json(response, callback, status, errorBody(status, type, message));
    }

    static void json(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, utf8(body), callback);
    }

    /** A client mistake in a request body: answered 400 {@code invalid_request_error}. */
    static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message, null, false, false);
        }
    }
}
