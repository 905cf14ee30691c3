package io.kvroute.router.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvroute.router.config.ConfigException;
import io.kvroute.router.config.RouterConfig;
import jakarta.servlet.ServletContext;
import java.io.ByteArrayInputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Config lookup order and deployment-failing messages, on a minimal in-memory ServletContext. */
class ServletDeploymentTest {

    @TempDir
    Path dir;

    @AfterEach
    void clearProperty() {
        System.clearProperty(ServletDeployment.CONFIG_KEY);
    }

    /** A ServletContext answering only init params and resources (a dynamic proxy: no container needed). */
    private static ServletContext context(Map<String, String> initParams, Map<String, String> resources) {
        return (ServletContext) Proxy.newProxyInstance(ServletDeploymentTest.class.getClassLoader(),
                new Class<?>[] {ServletContext.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getInitParameter":
                            return initParams.get((String) args[0]);
                        case "getResourceAsStream": {
                            String text = resources.get((String) args[0]);
                            return text == null ? null : new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
                        }
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
    }

    private Path yaml(String name, String text) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    @Test
    void initParam_winsOverSystemPropertyAndBundledFile() throws Exception {
        Path param = yaml("param.yaml", "worker-urls: [http://a:1]\npolicy: random\n");
        Path property = yaml("property.yaml", "worker-urls: [http://b:1]\npolicy: power_of_two\n");
        System.setProperty(ServletDeployment.CONFIG_KEY, property.toString());
        RouterConfig config = ServletDeployment.resolveConfig(context(Map.of("kvroute.config", param.toString()),
                Map.of("/WEB-INF/kvroute.yaml", "policy: cache_aware\n")));
        assertThat(config.policy()).isEqualTo("random");
    }

    @Test
    void systemProperty_winsOverBundledFile() throws Exception {
        Path property = yaml("property.yaml", "worker-urls: [http://b:1]\npolicy: power_of_two\n");
        System.setProperty(ServletDeployment.CONFIG_KEY, property.toString());
        RouterConfig config = ServletDeployment.resolveConfig(context(Map.of(),
                Map.of("/WEB-INF/kvroute.yaml", "policy: cache_aware\n")));
        assertThat(config.policy()).isEqualTo("power_of_two");
    }

    @Test
    void bundledFile_isTheFallback() {
        RouterConfig config = ServletDeployment.resolveConfig(context(Map.of(),
                Map.of("/WEB-INF/kvroute.yaml", "worker-urls: [http://c:1]\npolicy: random\n")));
        assertThat(config.policy()).isEqualTo("random");
        assertThat(config.workerUrls()).containsExactly("http://c:1");
    }

    @Test
    void missingConfig_failsNamingTheKey() {
        assertThatThrownBy(() -> ServletDeployment.resolveConfig(context(Map.of(), Map.of())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("kvroute.config")
                .hasMessageContaining("WEB-INF/kvroute.yaml");
    }

    @Test
    void initParamNamingAMissingFile_failsNamingTheKeyAndPath() {
        assertThatThrownBy(() -> ServletDeployment.resolveConfig(context(Map.of("kvroute.config", "/no/such.yaml"), Map.of())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("init-param kvroute.config")
                .hasMessageContaining("/no/such.yaml");
    }

    @Test
    void invalidValue_failsNamingTheFlagAndTheSource() throws Exception {
        Path bad = yaml("bad.yaml", "policy: no_such_policy\n");
        System.setProperty(ServletDeployment.CONFIG_KEY, bad.toString());
        assertThatThrownBy(() -> ServletDeployment.resolveConfig(context(Map.of(), Map.of())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("system property kvroute.config")
                .hasMessageContaining("--policy").hasMessageContaining("no_such_policy");
    }
}
