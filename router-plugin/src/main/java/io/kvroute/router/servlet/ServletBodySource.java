package io.kvroute.router.servlet;

import io.kvroute.router.ingress.InferenceFrontDoor;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * Reads a request body with a {@link ReadListener} (no thread waits on a slow client) and a hard
 * size limit: a declared length over the limit is refused before reading, and the read stops at
 * the first byte over it.
 */
final class ServletBodySource implements InferenceFrontDoor.BodySource {

    private final HttpServletRequest request;

    ServletBodySource(HttpServletRequest request) {
        this.request = request;
    }

    @Override
    public void read(long maxBytes, InferenceFrontDoor.BodySink sink) {
        long declared = request.getContentLengthLong();
        if (declared > maxBytes) {
            sink.onError(413, tooLarge(maxBytes));
            return;
        }
        ServletInputStream in;
        try {
            in = request.getInputStream();
        } catch (IOException e) {
            sink.onError(400, "could not read the request body: " + e);
            return;
        }
        ByteArrayOutputStream buffer = new ByteArrayOutputStream((int) Math.min(Math.max(declared, 256), 1 << 20));
        in.setReadListener(new ReadListener() {
            private final byte[] chunk = new byte[8192];
            private boolean failed;

            @Override
            public void onDataAvailable() throws IOException {
                while (!failed && in.isReady() && !in.isFinished()) {
                    int n = in.read(chunk);
                    if (n < 0) {
                        return;
                    }
                    if (buffer.size() + (long) n > maxBytes) {
                        failed = true;
                        sink.onError(413, tooLarge(maxBytes));
                        return;
                    }
                    buffer.write(chunk, 0, n);
                }
            }

            @Override
            public void onAllDataRead() {
                if (!failed) {
                    sink.onBody(buffer.toByteArray());
                }
            }

            @Override
            public void onError(Throwable failure) {
                if (!failed) {
                    failed = true;
                    sink.onError(400, "could not read the request body: " + failure);
                }
            }
        });
    }

    private static String tooLarge(long maxBytes) {
        return "request body exceeds the limit of " + maxBytes + " bytes (--max-body-bytes)";
    }
}
