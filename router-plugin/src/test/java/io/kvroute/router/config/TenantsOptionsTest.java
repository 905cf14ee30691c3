package io.kvroute.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The tenant flags: off by default, parsed into one settings record, bad values named. */
class TenantsOptionsTest {

    @Test
    void offByDefault() {
        RouterConfig config = RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1"});
        assertThat(config.tenants()).isEqualTo(TenantsConfig.OFF);
        assertThat(config.tenants().enabled()).isFalse();
    }

    @Test
    void flagsLandInTheTenantsRecord() {
        RouterConfig config = RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "/etc/kvroute/tenants.yaml", "--trusted-tenant-header", "x-tenant",
                "--qos-worker-capacity-tokens", "65536", "--qos-locality-slack-tokens", "0", "--qos-max-tenant-labels", "7"});
        assertThat(config.tenants()).isEqualTo(new TenantsConfig("/etc/kvroute/tenants.yaml", "x-tenant", 65_536, "worker", 200, 0, "tokens", 7, false));
        assertThat(config.tenants().queueEnabled()).isTrue();
        assertThat(config.tenants().perWorkerCapacity()).as("per worker unless asked otherwise").isTrue();
    }

    @Test
    void capacityScope_isPerWorkerByDefault_fleetOnRequest_andAnythingElseIsNamed() {
        RouterConfig fleet = RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--qos-worker-capacity-tokens", "100", "--qos-capacity-scope", "fleet"});
        assertThat(fleet.tenants().perWorkerCapacity()).isFalse();
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--qos-capacity-scope", "cluster"})).hasMessageContaining("--qos-capacity-scope");
    }

    @Test
    void badValues_nameTheFlag() {
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--qos-worker-capacity-tokens", "100"})).hasMessageContaining("--qos-worker-capacity-tokens needs --tenants-file");
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--qos-worker-capacity-tokens", "-1"})).hasMessageContaining("--qos-worker-capacity-tokens");
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--trusted-tenant-header", "bad header"})).hasMessageContaining("--trusted-tenant-header");
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--qos-locality-slack-tokens", "NaN"})).hasMessageContaining("--qos-locality-slack-tokens");
        assertThatThrownBy(() -> RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--qos-engine-priority", "true"})).hasMessageContaining("--qos-engine-priority needs --tenants-file");
    }

    @Test
    void enginePriority_isOffUnlessAsked() {
        RouterConfig on = RouterOptions.parse(new String[] {"--worker-urls", "http://127.0.0.1:1",
                "--tenants-file", "t.yaml", "--qos-engine-priority", "true"});
        assertThat(on.tenants().enginePriority()).isTrue();
        assertThat(TenantsConfig.OFF.enginePriority()).isFalse();
    }
}
