package io.kvroute.router.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvroute.router.dispatch.Completion;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The servlet sink's step machine against a scripted non-blocking output stream: a completion (and
 * with it the next upstream demand) happens only once the container says the output is ready again.
 */
class ServletClientSinkTest {

    /** A non-blocking output whose readiness the test controls, as a container's would change. */
    static final class ScriptedOutput extends ServletOutputStream {
        final ByteArrayOutputStream written = new ByteArrayOutputStream();
        final List<String> ops = new ArrayList<>();
        boolean ready = true;
        boolean failWrites;
        /** The next write fills the socket: the output is not ready after it. */
        boolean fillOnNextWrite;
        WriteListener listener;

        @Override
        public boolean isReady() {
            return ready;
        }

        @Override
        public void setWriteListener(WriteListener writeListener) {
            listener = writeListener;
        }

        @Override
        public void write(int b) throws IOException {
            if (failWrites) {
                throw new IOException("broken pipe");
            }
            written.write(b);
        }

        @Override
        public void write(byte[] b) throws IOException {
            if (failWrites) {
                throw new IOException("broken pipe");
            }
            ops.add("write");
            written.write(b);
            if (fillOnNextWrite) {
                fillOnNextWrite = false;
                ready = false;
            }
        }

        @Override
        public void flush() {
            ops.add("flush");
        }

        /** The container finds the socket writable again. */
        void becomeReady() throws IOException {
            ready = true;
            listener.onWritePossible();
        }
    }

    private final ScriptedOutput out = new ScriptedOutput();
    private final List<String> asyncCalls = new ArrayList<>();

    private ServletClientSink sink() {
        HttpServletResponse response = (HttpServletResponse) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getOutputStream" -> out;
                    case "setStatus", "setHeader" -> null;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        AsyncContext async = (AsyncContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {AsyncContext.class}, (proxy, method, args) -> {
                    asyncCalls.add(method.getName());
                    return null;
                });
        return new ServletClientSink(async, response);
    }

    private static ByteBuffer utf8(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void completion_waitsUntilTheOutputIsReadyAgain() throws Exception {
        ServletClientSink sink = sink();
        sink.begin(200, Map.of("Content-Type", "text/event-stream"));
        List<Boolean> done = new ArrayList<>();
        sink.write(utf8("data: 1\n\n"), Completion.of(() -> done.add(true), x -> done.add(false)));
        out.listener.onWritePossible(); // the container's first callback after setWriteListener
        assertThat(out.ops).containsExactly("write", "flush");
        assertThat(done).containsExactly(true);

        out.ready = true;
        sink.write(utf8("data: 2\n\n"), Completion.of(() -> done.add(true), x -> done.add(false)));
        assertThat(done).hasSize(2);

        // the socket fills: the write happens, but the flush and the completion wait for the container
        List<Boolean> third = new ArrayList<>();
        out.fillOnNextWrite = true;
        sink.write(utf8("data: 3\n\n"), Completion.of(() -> third.add(true), x -> third.add(false)));
        assertThat(out.ops).as("written, not yet flushed").endsWith("flush", "write");
        assertThat(third).as("no completion, so no upstream demand, while the client is not reading").isEmpty();
        out.becomeReady();
        assertThat(third).containsExactly(true);
        assertThat(out.written.toString(StandardCharsets.UTF_8)).isEqualTo("data: 1\n\ndata: 2\n\ndata: 3\n\n");
    }

    @Test
    void notReadyBeforeTheWrite_holdsTheChunkUntilOnWritePossible() throws Exception {
        ServletClientSink sink = sink();
        out.listener = null;
        List<Boolean> done = new ArrayList<>();
        sink.write(utf8("a"), Completion.of(() -> done.add(true), x -> done.add(false)));
        out.ready = false;
        // first write registered the listener; the container has not called back yet
        assertThat(out.ops).isEmpty();
        out.becomeReady();
        assertThat(out.ops).containsExactly("write", "flush");
        assertThat(done).containsExactly(true);
    }

    @Test
    void failedWrite_failsTheCompletionFiresGoneOnceAndCompletesTheAsyncContext() throws Exception {
        ServletClientSink sink = sink();
        List<Throwable> gone = new ArrayList<>();
        sink.onGone(gone::add);
        List<Boolean> done = new ArrayList<>();
        out.failWrites = true;
        sink.write(utf8("x"), Completion.of(() -> done.add(true), x -> done.add(false)));
        out.listener.onWritePossible();
        assertThat(done).containsExactly(false);
        assertThat(gone).hasSize(1);
        sink.onError(new IOException("again"));
        assertThat(gone).hasSize(1);
        assertThat(asyncCalls).containsOnlyOnce("complete");
    }

    @Test
    void end_completesTheAsyncContextOnlyAfterTheLastBytesAreFlushed() throws Exception {
        ServletClientSink sink = sink();
        sink.end(utf8("data: [DONE]\n\n"));
        out.ready = false;
        assertThat(asyncCalls).doesNotContain("complete");
        out.becomeReady();
        assertThat(out.ops).containsExactly("write", "flush");
        assertThat(asyncCalls).contains("complete");
    }
}
