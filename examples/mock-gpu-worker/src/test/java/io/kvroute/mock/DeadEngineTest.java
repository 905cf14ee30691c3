package io.kvroute.mock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * When the engine loop dies, the worker must stop looking fresh and idle. A real
 * worker on loopback, its load reports read with a real ZeroMQ SUB socket; the loop is killed by a
 * step listener that throws on the engine thread.
 */
class DeadEngineTest {

    @Test
    void deadEngineLoop_failsHealth_endsTheRequest_andStopsLoadReports() throws Exception {
        try (MockWorkerMain.MockWorker worker = MockWorkerMain.start("--port", "0", "--decode-ms-per-step", "1");
                ZContext zmq = new ZContext()) {
            // PUB/SUB drops what is published before a subscription lands (the slow joiner):
            // reconnect and retry for the first report instead of betting on one window (flaked in CI).
            ZMQ.Socket sub = null;
            byte[] first = null;
            for (int attempt = 0; attempt < 5 && first == null; attempt++) {
                if (sub != null) {
                    sub.close();
                }
                sub = zmq.createSocket(SocketType.SUB);
                sub.subscribe(new byte[0]);
                sub.setReceiveTimeOut(3_000);
                sub.connect(worker.loadEndpoints().get(0));
                first = sub.recv();
            }
            HttpClient client = new HttpClient();
            client.start();
            try {
                assertThat(first).as("a live worker reports (idle ticker)").isNotNull();
                assertThat(client.GET(worker.baseUrl() + "/health").getStatus()).isEqualTo(200);

                worker.engine().addStepListener(s -> {
                    throw new IllegalStateException("injected engine failure");
                });
                ContentResponse answer = client.newRequest(worker.baseUrl() + "/generate").method(HttpMethod.POST)
                        .timeout(30, TimeUnit.SECONDS)
                        .body(new StringRequestContent("application/json",
                                "{\"text\":\"hello there\",\"sampling_params\":{\"max_new_tokens\":50}}"))
                        .send();
                assertThat(answer.getStatus()).as("the in-flight request gets an answer, not a hang").isPositive();
                assertThat(worker.engine().isAlive()).isFalse();
                assertThat(client.GET(worker.baseUrl() + "/health").getStatus()).isEqualTo(503);
                ContentResponse after = client.newRequest(worker.baseUrl() + "/generate").method(HttpMethod.POST)
                        .timeout(30, TimeUnit.SECONDS)
                        .body(new StringRequestContent("application/json", "{\"text\":\"again\"}")).send();
                assertThat(after.getStatus()).as("a new request to a dead engine").isEqualTo(503);
                assertThat(after.getContentAsString()).contains("engine loop is not running");

                // drain what was sent before the death, then expect silence for longer than the
                // 1 s re-send interval of an unchanged report (a live worker always speaks within it)
                sub.setReceiveTimeOut(200);
                while (sub.recv() != null) {
                    // frames published before the loop died
                }
                sub.setReceiveTimeOut(2_500);
                assertThat(sub.recv()).as("no load report from a dead engine").isNull();
            } finally {
                client.stop();
            }
        }
    }
}
