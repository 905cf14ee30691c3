package io.kvroute.router.http;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors that Jetty itself raises before any handler runs (a malformed URI, headers too large, a
 * bad HTTP version) rendered in the same OpenAI JSON shape as the router's own, never as HTML.
 */
public final class JsonErrorHandler extends ErrorHandler {

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        int status = response.getStatus() <= 0 ? 500 : response.getStatus();
        Object message = request.getAttribute(ERROR_MESSAGE);
        String text = message == null ? "request rejected by the HTTP layer" : message.toString();
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(OpenAiErrors.body(status, OpenAiErrors.typeFor(status), text)), callback);
        return true;
    }
}
