package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
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
}
