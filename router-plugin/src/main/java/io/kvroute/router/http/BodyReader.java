package io.kvroute.router.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Reads a request body asynchronously with a hard size limit: the read stops at the first byte
 * over the limit instead of buffering an oversized body. Demand-driven, so a slow client never
 * holds a thread.
 */
final class BodyReader {

    /** The outcome of one read: bytes, or a status-carrying failure. */
    interface Sink {
        void onBody(byte[] body);

        void onError(ApiException error);
    }

    private final Request request;
    private final long maxBytes;
    private final Sink sink;
    private final ByteArrayOutputStream buffer;

    private BodyReader(Request request, long maxBytes, Sink sink, int expected) {
        this.request = request;
        this.maxBytes = maxBytes;
        this.sink = sink;
        this.buffer = new ByteArrayOutputStream(Math.max(256, expected));
    }

    static void read(Request request, long maxBytes, Sink sink) {
        long declared = request.getLength();
        if (declared > maxBytes) {
            sink.onError(tooLarge(maxBytes));
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
                sink.onError(new ApiException(400, "could not read the request body: " + failure));
                return;
            }
            ByteBuffer bytes = chunk.getByteBuffer();
            if (buffer.size() + (long) bytes.remaining() > maxBytes) {
                chunk.release();
                sink.onError(tooLarge(maxBytes));
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

    private static ApiException tooLarge(long maxBytes) {
        return new ApiException(413, "request body exceeds the limit of " + maxBytes + " bytes (--max-body-bytes)");
    }
}
