package io.kvroute.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kvroute.router.config.RouterConfig;
import io.kvroute.router.config.RouterOptions;
import io.kvroute.router.config.ServiceDiscoveryConfig;
import io.kvroute.router.discovery.DiscoveryRules;
import io.kvroute.router.discovery.PodFacts;
import io.kvroute.router.worker.WorkerRole;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code examples/kubernetes/}: every manifest parses with fabric8's model classes, and the
 * references between them hold (selectors match labels, ports match, the ConfigMap key is the file
 * the router reads, the config it holds is valid and its selectors pick each worker Deployment's
 * pods in the intended role, RBAC is exactly get/list/watch on pods).
 */
class KubernetesManifestsTest {

    private static final Path DIR = Path.of("..", "examples", "kubernetes");
    private static final List<HasMetadata> RESOURCES = new ArrayList<>();

    @BeforeAll
    static void parseEveryManifest() throws Exception {
        try (Stream<Path> files = Files.list(DIR)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (String document : Files.readString(file).split("(?m)^---\\s*$")) {
                    if (document.lines().anyMatch(l -> l.startsWith("kind:"))) {
                        Object parsed = Serialization.unmarshal(document);
                        assertThat(parsed).as(file + " parses to a Kubernetes resource").isInstanceOf(HasMetadata.class);
                        RESOURCES.add((HasMetadata) parsed);
                    }
                }
            }
        }
        assertThat(RESOURCES).isNotEmpty();
        assertThat(RESOURCES).allSatisfy(r -> assertThat(r.getMetadata().getName()).isNotBlank());
    }

    private static <T extends HasMetadata> List<T> all(Class<T> type) {
        return RESOURCES.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static <T extends HasMetadata> T named(Class<T> type, String name) {
        return all(type).stream().filter(r -> r.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
    }

    private static Deployment router() {
        return named(Deployment.class, "kvroute-router");
    }

    private static Container routerContainer() {
        return router().getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    /** The router's config as the container sees it: the ConfigMap key mounted where --config points. */
    private static RouterConfig routerConfig(Path tempDir) throws Exception {
        List<String> args = routerContainer().getArgs();
        String configPath = args.get(args.indexOf("--config") + 1);
        VolumeMount mount = routerContainer().getVolumeMounts().stream()
                .filter(m -> configPath.startsWith(m.getMountPath() + "/")).findFirst()
                .orElseThrow(() -> new AssertionError("--config " + configPath + " is on no mounted volume"));
        String configMapName = router().getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow().getConfigMap().getName();
        String key = configPath.substring(mount.getMountPath().length() + 1);
        String yaml = named(ConfigMap.class, configMapName).getData().get(key);
        assertThat(yaml).as("ConfigMap %s has key %s, the file the router reads", configMapName, key).isNotNull();
        Path file = tempDir.resolve(key);
        Files.writeString(file, yaml);
        return RouterOptions.parse("--config", file.toString());
    }

    @Test
    void routerDeployment_threeReplicas_probes_andAGracePeriodCoveringTheDrain(@TempDir Path tempDir) throws Exception {
        Deployment router = router();
        assertThat(router.getSpec().getReplicas()).isEqualTo(3);
        assertThat(router.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(router.getSpec().getSelector().getMatchLabels());
        Container container = routerContainer();
        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        RouterConfig config = routerConfig(tempDir);
        ContainerPort http = port(container, container.getReadinessProbe().getHttpGet().getPort());
        assertThat(http.getContainerPort()).as("probes hit the port the router listens on").isEqualTo(config.port());
        assertThat(config.host()).isEqualTo("0.0.0.0");
        long preStopSecs = Long.parseLong(container.getLifecycle().getPreStop().getExec().getCommand().get(1));
        long graceSecs = router.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        assertThat(graceSecs).as("grace covers preStop + --shutdown-drain-secs, with at most a 10 s margin")
                .isBetween(preStopSecs + (long) config.timeouts().shutdownDrainSecs(), preStopSecs + (long) config.timeouts().shutdownDrainSecs() + 10);
    }

    @Test
    void routerService_selectsTheRouterPodsOnItsNamedPort() {
        Service service = named(Service.class, "kvroute-router");
        PodTemplateSpec template = router().getSpec().getTemplate();
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(service.getSpec().getSelector());
        port(routerContainer(), service.getSpec().getPorts().get(0).getTargetPort());
    }

    @Test
    void rbac_isExactlyGetListWatchOnPods_boundToTheRoutersServiceAccount() {
        Role role = named(Role.class, "kvroute-pod-reader");
        assertThat(role.getRules()).hasSize(1);
        PolicyRule rule = role.getRules().get(0);
        assertThat(rule.getApiGroups()).containsExactly("");
        assertThat(rule.getResources()).containsExactly("pods");
        assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
        RoleBinding binding = named(RoleBinding.class, "kvroute-router-pod-reader");
        assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        String account = router().getSpec().getTemplate().getSpec().getServiceAccountName();
        named(ServiceAccount.class, account);
        assertThat(binding.getSubjects()).anySatisfy(s -> {
            assertThat(s.getKind()).isEqualTo("ServiceAccount");
            assertThat(s.getName()).isEqualTo(account);
        });
        assertThat(RESOURCES.stream().filter(r -> !(r instanceof io.fabric8.kubernetes.api.model.Namespace)))
                .allSatisfy(r -> assertThat(r.getMetadata().getNamespace()).as(r.getMetadata().getName()).isEqualTo("kvroute"));
    }

    @Test
    void workerDeployments_arePickedByTheRoutersSelectorsInTheirRole_onTheDiscoveryPort(@TempDir Path tempDir)
            throws Exception {
        ServiceDiscoveryConfig discovery = routerConfig(tempDir).serviceDiscovery();
        assertThat(discovery.enabled()).isTrue();
        assertThat(discovery.namespace()).isEqualTo(router().getMetadata().getNamespace());
        DiscoveryRules rules = new DiscoveryRules(discovery);
        Map<String, WorkerRole> expected = Map.of("mock-gpu-worker-regular", WorkerRole.REGULAR,
                "mock-gpu-worker-prefill", WorkerRole.PREFILL, "mock-gpu-worker-decode", WorkerRole.DECODE);
        for (Map.Entry<String, WorkerRole> entry : expected.entrySet()) {
            Deployment workers = named(Deployment.class, entry.getKey());
            PodTemplateSpec template = workers.getSpec().getTemplate();
            assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(workers.getSpec().getSelector().getMatchLabels());
            PodFacts pod = new PodFacts("kvroute/" + entry.getKey() + "-x", true, true, false, "10.0.0.1",
                    template.getMetadata().getLabels(), template.getMetadata().getAnnotations());
            var desired = rules.classify(pod);
            assertThat(desired).as(entry.getKey() + " pods become workers").isNotNull();
            assertThat(desired.role()).isEqualTo(entry.getValue());
            Container container = template.getSpec().getContainers().get(0);
            List<String> args = container.getArgs();
            assertThat(args.get(args.indexOf("--port") + 1)).as("worker listens on --service-discovery-port")
                    .isEqualTo(Integer.toString(discovery.port()));
            assertThat(port(container, container.getReadinessProbe().getHttpGet().getPort()).getContainerPort())
                    .isEqualTo(discovery.port());
            assertThat(args.get(args.indexOf("--role") + 1)).isEqualTo(entry.getValue().label());
            if (entry.getValue() == WorkerRole.PREFILL) {
                assertThat(desired.bootstrapPort()).as("bootstrap port from the annotation").isNotNull();
                assertThat(args.get(args.indexOf("--bootstrap-port") + 1))
                        .isEqualTo(Integer.toString(desired.bootstrapPort()));
            }
        }
    }

    /** The container port a probe or Service names (by name or number); fails when there is none. */
    private static ContainerPort port(Container container, IntOrString ref) {
        return container.getPorts().stream()
                .filter(p -> ref.getStrVal() != null ? ref.getStrVal().equals(p.getName())
                        : ref.getIntVal().equals(p.getContainerPort()))
                .findFirst().orElseThrow(() -> new AssertionError(container.getName() + " has no port " + ref));
    }
}
