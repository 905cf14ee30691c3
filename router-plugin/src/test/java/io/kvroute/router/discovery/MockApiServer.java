package io.kvroute.router.discovery;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * fabric8's mock API server in CRUD mode (real list/watch semantics: resource versions, watch
 * events over WebSocket) on a loopback port, an {@link #admin} client that writes pods directly,
 * and a {@link #routerClient} that reaches it through a {@link TcpProxy} the test can cut.
 */
public final class MockApiServer implements AutoCloseable {

    /** Held so the level sticks: the mock logs every request at INFO through java.util.logging. */
    private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    static {
        MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    private final KubernetesMockServer server;
    private final TcpProxy proxy;
    public final KubernetesClient admin;
    public final KubernetesClient routerClient;

    public MockApiServer() throws IOException {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesMixedDispatcher(new HashMap<>()), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        proxy = new TcpProxy(server.getPort());
        admin = client(server.getPort());
        routerClient = client(proxy.port());
    }

    private static KubernetesClient client(int port) {
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl("http://127.0.0.1:" + port)
                .withNamespace("test")
                .withWatchReconnectInterval(100)
                .withWatchReconnectLimit(-1)
                .withRequestRetryBackoffInterval(100)
                .withRequestTimeout(5_000)
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    /** The mock API server's own URL (no relay), e.g. for a kubeconfig file. */
    public String directUrl() {
        return "http://127.0.0.1:" + server.getPort();
    }

    /** Resets every connection through the proxy; with {@code keepRefusing}, the API server stays unreachable. */
    public void cut(boolean keepRefusing) {
        proxy.cut(keepRefusing);
    }

    public void restore() {
        proxy.restore();
    }

    /** Creates or replaces a pod with the given status facts. */
    public void putPod(String namespace, String name, String ip, boolean ready, Map<String, String> labels,
            Map<String, String> annotations) {
        Pod pod = new PodBuilder()
                .withNewMetadata().withNamespace(namespace).withName(name).withLabels(labels)
                .withAnnotations(annotations).endMetadata()
                .withNewSpec().addNewContainer().withName("worker").withImage("mock-worker").endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip)
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition()
                .endStatus()
                .build();
        admin.pods().inNamespace(namespace).resource(pod).createOr(existing -> existing.update());
        admin.pods().inNamespace(namespace).withName(name).editStatus(p -> new PodBuilder(p).editStatus()
                .withPhase("Running").withPodIP(ip).withConditions().addNewCondition().withType("Ready")
                .withStatus(ready ? "True" : "False").endCondition().endStatus().build());
    }

    /** Flips an existing pod's Ready condition (a status-only change: one GET and one PATCH). */
    public void setReady(String namespace, String name, boolean ready) {
        admin.pods().inNamespace(namespace).withName(name).editStatus(p -> new PodBuilder(p).editStatus()
                .withConditions().addNewCondition().withType("Ready").withStatus(ready ? "True" : "False")
                .endCondition().endStatus().build());
    }

    public void deletePod(String namespace, String name) {
        admin.pods().inNamespace(namespace).withName(name).delete();
    }

    @Override
    public void close() throws IOException {
        routerClient.close();
        admin.close();
        proxy.close();
        server.destroy();
    }
}
