package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.eclipse.jetty.client.ContentResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scheduler component as a jetty-home module: kvroute-scheduler-jetty-module.zip unzipped into
 * a fresh base, {@code --add-modules=http,kvroute-scheduler}, Jetty started as its own JVM. With no
 * engine attached it still owns the load publisher (bound on start) and advertises it in SGLang's
 * {@code kv_events} block of {@code /server_info}.
 */
class SchedulerJettyHomeModuleIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void moduleServesSchedulerAndTheLoadAdvert_andStopsGracefully(@TempDir Path base) throws Exception {
        try (JettyBase jetty = new JettyBase(base); Http http = new Http()) {
            jetty.unzip(Path.of(JettyBase.requiredProperty("kvroute.it.schedulerModuleZip")));
            jetty.startJar("--add-modules=http,kvroute-scheduler");
            Path ini = base.resolve("start.d/kvroute-scheduler.ini");
            assertThat(Files.readString(ini)).contains("# kvroute.scheduler.load-endpoint=");
            Files.writeString(ini, "kvroute.scheduler.load-endpoint=tcp://*:*\n", StandardOpenOption.APPEND);
            jetty.start();

            ContentResponse scheduler = http.get(jetty.url("/scheduler"));
            assertThat(scheduler.getStatus()).isEqualTo(200);
            JsonNode view = JSON.readTree(scheduler.getContentAsString());
            assertThat(view.has("engine") && view.get("engine").isNull()).as(view.toString()).isTrue();
            String endpoint = view.path("load_publisher").path("endpoints").get(0).asText();
            assertThat(endpoint).startsWith("tcp://0.0.0.0:");

            JsonNode block = JSON.readTree(http.get(jetty.url("/server_info")).getContentAsString()).path("kv_events");
            assertThat(block.path("endpoint_host").asText()).as("wildcard: use the worker URL's host").isEqualTo("*");
            assertThat(block.path("load_endpoint_port_base").asInt())
                    .isEqualTo(Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1)));
            assertThat(block.path("load_topic").asText()).isEqualTo("load");

            assertThat(jetty.stop()).as(jetty.output()).isZero();
            assertThat(jetty.output()).doesNotContain("Exception");
        }
    }
}
