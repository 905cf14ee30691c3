package io.kvroute.router.ingress;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The one place a request body is parsed: the front door calls {@link #parse} once per request and
 * hands the tree along, so validation ({@link BodyProbe#of}), ingress tokenization (fields, caller
 * {@code input_ids}, routing text), sanitizing and the PD body all read or rewrite that tree instead of
 * parsing the bytes again. Bytes go out either as received or serialized once from the tree.
 *
 * <p>Malformed JSON, an empty body, trailing content, invalid UTF-8 and nesting or number lengths beyond
 * Jackson's read constraints all end in a 400 {@link ApiException}. Thread-safe.
 */
final class RequestJson {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Bodies parsed since the class loaded: the parse-once test reads it; not exported anywhere. */
    static final LongAdder PARSES = new LongAdder();

    private RequestJson() {}

    /** The body as a JSON object tree, or a 400 saying why it is not one. */
    static ObjectNode parse(byte[] body) throws ApiException {
        PARSES.increment();
        try (JsonParser parser = JSON.createParser(body)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                if (first == null) {
                    throw new ApiException(400, "invalid JSON body: empty");
                }
                parser.skipChildren();
                if (parser.nextToken() != null) {
                    throw new ApiException(400, "invalid JSON body: trailing content");
                }
                throw new ApiException(400, "the request body must be a JSON object");
            }
            ObjectNode root = JSON.readTree(parser);
            if (parser.nextToken() != null) {
                throw new ApiException(400, "invalid JSON body: trailing content after the object");
            }
            return root;
        } catch (IOException e) {
            String detail = e instanceof JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
            throw new ApiException(400, "invalid JSON body: " + detail);
        }
    }
}
