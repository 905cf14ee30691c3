package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import io.kvroute.mock.BundledTokenizer;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvroute.war} in embedded Tomcat 11 at context {@code /kvroute}, config from the context init-param. */
class TomcatWarTest extends WarScenarios {

    @TempDir
    static Path dir;
    private static Tomcat tomcat;
    private static String base;

    @BeforeAll
    static void deploy() throws Exception {
        Path yaml = startWorkersAndWriteConfig(dir);
        tomcat = newTomcat(dir.resolve("tomcat"));
        Context context = tomcat.addWebapp("/kvroute", war().toAbsolutePath().toString());
        context.addParameter("kvroute.config", yaml.toString());
        tomcat.start();
        assertThat(context.getState()).isEqualTo(LifecycleState.STARTED);
        base = "http://127.0.0.1:" + tomcat.getConnector().getLocalPort() + "/kvroute";
        new TomcatWarTest().awaitModels();
    }

    @AfterAll
    static void undeploy() throws Exception {
        if (tomcat != null) {
            tomcat.stop();
            tomcat.destroy();
        }
    }

    @Override
    String base() {
        return base;
    }

    static Tomcat newTomcat(Path baseDir) throws Exception {
        Files.createDirectories(baseDir.resolve("webapps"));
        Tomcat server = new Tomcat();
        server.setBaseDir(baseDir.toString());
        server.setHostname("127.0.0.1");
        server.setPort(0);
        server.getConnector().setProperty("address", "127.0.0.1");
        return server;
    }

    /**
     * {@code api-key} in the WAR's config protects everything but the probes, as on the Jetty handler:
     * {@code /v1/models}, {@code /metrics} and inference answer 401 without the key and serve with it.
     */
    @Test
    void apiKey_protectsEverythingButTheProbes() throws Exception {
        Path keyed = dir.resolve("keyed.yaml");
        Files.writeString(keyed, Files.readString(dir.resolve("kvroute.yaml")) + "api-key: s3cret\n");
        Tomcat other = newTomcat(dir.resolve("tomcat-keyed"));
        try (Http client = new Http()) {
            Context context = other.addWebapp("/keyed", war().toAbsolutePath().toString());
            context.addParameter("kvroute.config", keyed.toString());
            other.start();
            String keyedBase = "http://127.0.0.1:" + other.getConnector().getLocalPort() + "/keyed";
            for (String path : new String[] {"/v1/models", "/metrics"}) {
                assertThat(client.get(keyedBase + path).getStatus()).as(path + " without the key").isEqualTo(401);
                assertThat(client.client.newRequest(keyedBase + path).headers(h -> h.put("Authorization", "Bearer s3cret"))
                        .send().getStatus()).as(path + " with the key").isEqualTo(200);
            }
            assertThat(client.postJson(keyedBase + "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}").getStatus())
                    .as("inference without the key").isEqualTo(401);
            assertThat(client.get(keyedBase + "/healthz").getStatus()).as("liveness probe stays open").isEqualTo(200);
        } finally {
            other.stop();
            other.destroy();
        }
    }

    /** Settings a servlet container cannot honour fail the deployment with a message, not silently. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"metrics-port: 0", "access-log: stdout"})
    void hostOnlySetting_failsTheDeploymentNamingIt(String line) throws Exception {
        Path yaml = dir.resolve("host-only.yaml");
        Files.writeString(yaml, Files.readString(dir.resolve("kvroute.yaml")) + line + "\n");
        String flag = "--" + line.substring(0, line.indexOf(':'));
        Tomcat other = newTomcat(dir.resolve("tomcat-host-only"));
        try {
            Context context = other.addWebapp("/hostonly", war().toAbsolutePath().toString());
            context.addParameter("kvroute.config", yaml.toString());
            Throwable failure = catchThrowable(other::start);
            StringBuilder chain = new StringBuilder();
            for (Throwable t = failure; t != null; t = t.getCause()) {
                chain.append(t.getMessage()).append('\n');
            }
            assertThat(chain.toString()).contains(flag).contains("not supported in a servlet container");
            assertThat(context.getState().isAvailable()).isFalse();
        } finally {
            other.stop();
            other.destroy();
        }
    }

    /** An unknown policy fails the deployment with a message naming the flag, instead of serving 500s. */
    @Test
    void invalidConfig_failsTheDeployment() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "policy: no_such_policy\n");
        Tomcat other = newTomcat(dir.resolve("tomcat-bad"));
        try {
            Context context = other.addWebapp("/bad", war().toAbsolutePath().toString());
            context.addParameter("kvroute.config", bad.toString());
            Throwable failure = catchThrowable(other::start);
            assertThat(failure).as("Tomcat reports the failed context").isNotNull();
            StringBuilder chain = new StringBuilder();
            for (Throwable t = failure; t != null; t = t.getCause()) {
                chain.append(t.getMessage()).append('\n');
            }
            // the deployment error names the source key and the bad flag (the WAR's ConfigException
            // lives in the web application's class loader, so the message is what a test can check)
            assertThat(chain.toString()).contains("context init-param kvroute.config").contains("--policy")
                    .contains("no_such_policy");
            assertThat(context.getState().isAvailable()).isFalse();
        } finally {
            other.stop();
            other.destroy();
        }
    }

    /**
     * A WAR with a tokenizer redeploys in place: the tokenizers' native library is loaded once per
     * deployment's class loader, so the second deployment (a context reload, what {@code touch
     * kvroute.war} does) tokenizes and serves like the first instead of failing with
     * "already loaded in another classloader" and answering 404.
     */
    @Test
    void tokenizerWar_redeploysInPlaceAndServesTwice() throws Exception {
        Path yaml = dir.resolve("tokenized.yaml");
        Files.writeString(yaml, Files.readString(dir.resolve("kvroute.yaml")) + "tokenizer-path: "
                + BundledTokenizer.qwen3().toAbsolutePath() + "\n");
        Tomcat other = newTomcat(dir.resolve("tomcat-tokenized"));
        try (Http client = new Http()) {
            Context context = other.addWebapp("/tok", war().toAbsolutePath().toString());
            // as a <Parameter> of a context XML: it outlives a reload (addParameter's does not)
            org.apache.tomcat.util.descriptor.web.ApplicationParameter config =
                    new org.apache.tomcat.util.descriptor.web.ApplicationParameter();
            config.setName("kvroute.config");
            config.setValue(yaml.toString());
            context.addApplicationParameter(config);
            other.start();
            String tokBase = "http://127.0.0.1:" + other.getConnector().getLocalPort() + "/tok";
            for (int deployment = 1; deployment <= 2; deployment++) {
                if (deployment == 2) {
                    context.reload();
                }
                assertThat(context.getState()).as("deployment " + deployment).isEqualTo(LifecycleState.STARTED);
                awaitChat(client, tokBase, "deployment " + deployment);
            }
        } finally {
            other.stop();
            other.destroy();
        }
    }


    /**
     * Stopping the web application while a stream runs (overwriting the WAR, stopping Tomcat) lets the
     * stream finish when the context's unloadDelay covers it, as docs/deployment-servlet.md tells
     * operators to set it: it ends with {@code [DONE]}. (With Tomcat's 2 s default it is cut at about
     * 2.1 s with neither {@code [DONE]} nor an error event, and nothing in the web application can
     * write one: Tomcat stops delivering write callbacks.)
     */
    @Test
    void undeploy_drainsARunningStreamToItsEnd() throws Exception {
        Path yaml = dir.resolve("drain.yaml");
        Files.writeString(yaml, Files.readString(dir.resolve("kvroute.yaml")) + "shutdown-drain-secs: 20\n");
        Tomcat other = newTomcat(dir.resolve("tomcat-drain"));
        try (Http client = new Http()) {
            Context context = other.addWebapp("/drain", war().toAbsolutePath().toString());
            context.addParameter("kvroute.config", yaml.toString());
            // <Context unloadDelay="25000">: Tomcat keeps serving running async requests for this long
            // after the stop signal (default 2 s), then stops the context under them
            ((org.apache.catalina.core.StandardContext) context).setUnloadDelay(25_000);
            other.start();
            String drainBase = "http://127.0.0.1:" + other.getConnector().getLocalPort() + "/drain";
            awaitChat(client, drainBase, "deployed");
            long start = System.nanoTime();
            var reply = client.stream(drainBase + "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"tell me a story\"}],\"max_tokens\":240,"
                            + "\"stream\":true,\"ignore_eos\":true}");
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> System.nanoTime() - start > 500_000_000L);
            Thread stopper = new Thread(() -> {
                try {
                    context.stop();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            stopper.start();
            var done = reply.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(done.body()).as("the stream ran to its end during the drain").endsWith("data: [DONE]\n\n");
            stopper.join(30_000);
        } finally {
            other.stop();
            other.destroy();
        }
    }

    private static void awaitChat(Http client, String base, String what) {
        org.awaitility.Awaitility.await(what).atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> {
            var response = client.postJson(base + "/v1/chat/completions",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],\"max_tokens\":2}");
            assertThat(response.getStatus()).as(what + ": " + response.getContentAsString()).isEqualTo(200);
        });
    }

}
