package io.kvroute.router.http;

import java.io.ByteArrayOutputStream;
import io.kvroute.router.ingress.InferenceFrontDoor.BodySink;
import java.nio.ByteBuffer;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Reads a request body asynchronously with a hard size limit: the read stops at the first byte
 * over the limit instead of buffering an oversized body. Demand-driven, so a slow client never
 * holds a thread. The outcome goes to the front door's {@link BodySink}: bytes, or a status (413, 400) and why.
 */
final class BodyReader {

    private final Request request;
    private final long maxBytes;
    private final BodySink sink;
    private final ByteArrayOutputStream buffer;

    private BodyReader(Request request, long maxBytes, BodySink sink, int expected) {
        this.request = request;
        this.maxBytes = maxBytes;
        this.sink = sink;
        this.buffer = new ByteArrayOutputStream(Math.max(256, expected));
    }

    static void read(Request request, long maxBytes, BodySink sink) {
        long declared = request.getLength();
        if (declared > maxBytes) {
            tooLarge(sink, maxBytes);
            return;
        }
        new BodyReader(request, maxBytes, sink, (int) Math.min(Math.max(declared, 0), 1 << 20)).readMore();
    }

    private void readMore() {
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(this::readMore);
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                Throwable failure = chunk.getFailure();
                chunk.release();
                sink.onError(400, "could not read the request body: " + failure);
                return;
            }
            ByteBuffer bytes = chunk.getByteBuffer();
            if (buffer.size() + (long) bytes.remaining() > maxBytes) {
                chunk.release();
                tooLarge(sink, maxBytes);
                return;
            }
            byte[] copy = new byte[bytes.remaining()];
            bytes.get(copy);
            buffer.write(copy, 0, copy.length);
            boolean last = chunk.isLast();
            chunk.release();
            if (last) {
                sink.onBody(buffer.toByteArray());
                return;
            }
        }
    }

    private static void tooLarge(BodySink sink, long maxBytes) {
        sink.onError(413, "request body exceeds the limit of " + maxBytes + " bytes (--max-body-bytes)");
    }
}
