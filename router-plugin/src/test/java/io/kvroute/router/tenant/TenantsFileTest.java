package io.kvroute.router.tenant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tenants file: parsing, validation with clear errors, key lookup by digest, reload on change. */
class TenantsFileTest {

    static final String ACME_KEY = "sk-acme-1";
    static final String FILE = "tenants:\n"
            + "  - name: acme\n"
            + "    api_key_sha256: " + TenantDirectory.sha256Hex(ACME_KEY) + "\n"
            + "    weight: 2\n"
            + "    max_class: interactive\n"
            + "    requests_per_minute: 600\n"
            + "    tokens_per_minute: 100000\n"
            + "  - name: batchco\n"
            + "    api_keys_sha256: [" + TenantDirectory.sha256Hex("sk-b1") + ", " + TenantDirectory.sha256Hex("sk-b2") + "]\n"
            + "    max_class: batch\n"
            + "classes:\n"
            + "  batch: {queue_cap: 5, queue_timeout_ms: 1000}\n"
            + "default_output_tokens: 128\n";

    @Test
    void parsesTenantsClassesAndDefaults_andFindsTenantsByTheirKey() throws Exception {
        TenantDirectory dir = TenantsFile.parse(FILE);
        TenantSpec acme = dir.byKey(ACME_KEY);
        assertThat(acme).isEqualTo(new TenantSpec("acme", 2, PriorityClass.INTERACTIVE, 600, 100_000));
        assertThat(dir.byKey("sk-b2").name()).isEqualTo("batchco");
        assertThat(dir.byKey("sk-unknown")).isNull();
        assertThat(dir.byKey(TenantDirectory.sha256Hex(ACME_KEY))).as("the digest itself is no key").isNull();
        assertThat(dir.classSpec(PriorityClass.BATCH).queueCap()).isEqualTo(5);
        assertThat(dir.classSpec(PriorityClass.BATCH).starvationMillis())
                .isEqualTo(ClassSpec.defaultFor(PriorityClass.BATCH).starvationMillis());
        assertThat(dir.defaultOutputTokens()).isEqualTo(128);
    }

    @Test
    void theApiKeyFlag_joinsAsOneTenant() throws Exception {
        TenantDirectory dir = TenantsFile.parse(FILE).withApiKey("sk-legacy");
        assertThat(dir.byKey("sk-legacy").name()).isEqualTo(TenantDirectory.API_KEY_TENANT);
        assertThat(dir.byKey(ACME_KEY).name()).isEqualTo("acme");
    }

    @Test
    void invalidFiles_failWithTheFieldAndValueNamed() {
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - name: x\n    weight: 0\n"))
                .hasMessageContaining("tenants[0].weight").hasMessageContaining("0");
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - name: x\n    api_key_sha256: abc\n"))
                .hasMessageContaining("64 lowercase hex");
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - name: x\n    request_per_minute: 5\n"))
                .hasMessageContaining("request_per_minute: unknown field");
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - name: x\n  - name: x\n"))
                .hasMessageContaining("declared twice");
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - name: x\n    max_class: root\n"))
                .hasMessageContaining("max_class");
        assertThatThrownBy(() -> TenantsFile.parse("classes:\n  gold: {}\n")).hasMessageContaining("unknown class");
        assertThatThrownBy(() -> TenantsFile.parse("classes:\n  batch: {queue_timeout_ms: 0}\n"))
                .hasMessageContaining("queue_timeout_ms");
        assertThatThrownBy(() -> TenantsFile.parse("tenants: [")).hasMessageContaining("not valid YAML");
        String key = TenantDirectory.sha256Hex("k");
        assertThatThrownBy(() -> TenantsFile.parse("tenants:\n  - {name: a, api_key_sha256: " + key
                + "}\n  - {name: b, api_key_sha256: " + key + "}\n")).hasMessageContaining("already belongs to tenant 'a'");
    }

    @Test
    void priorityHeader_isClampedToTheTenantsHighestClass() {
        assertThat(PriorityClass.effective("system", PriorityClass.INTERACTIVE)).isEqualTo(PriorityClass.INTERACTIVE);
        assertThat(PriorityClass.effective(" Batch ", PriorityClass.INTERACTIVE)).isEqualTo(PriorityClass.BATCH);
        assertThat(PriorityClass.effective(null, PriorityClass.SYSTEM)).isEqualTo(PriorityClass.DEFAULT);
        assertThat(PriorityClass.effective("gold", PriorityClass.SYSTEM)).isEqualTo(PriorityClass.DEFAULT);
        assertThat(PriorityClass.effective("interactive", PriorityClass.BATCH)).isEqualTo(PriorityClass.BATCH);
    }

    @Test
    void watcher_publishesAnEditedFile_andKeepsThePreviousTenantsWhenAnEditIsBroken(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, FILE);
        TenantDirectoryWatcher watcher = TenantDirectoryWatcher.open(file, null);
        TenantDirectory first = watcher.current();
        assertThat(watcher.poll()).isFalse();
        Files.writeString(file, FILE.replace("weight: 2", "weight: 3"));
        Files.setLastModifiedTime(file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 2_000));
        assertThat(watcher.poll()).isTrue();
        assertThat(watcher.current().byKey(ACME_KEY).weight()).isEqualTo(3);
        assertThat(first.byKey(ACME_KEY).weight()).as("a captured snapshot never changes").isEqualTo(2);
        TenantDirectory good = watcher.current();
        Files.writeString(file, "tenants:\n  - name: [broken\n");
        Files.setLastModifiedTime(file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 4_000));
        assertThat(watcher.poll()).isFalse();
        assertThat(watcher.current()).isSameAs(good);
        assertThat(watcher.failedReloads()).isEqualTo(1);
        Files.delete(file);
        assertThat(watcher.poll()).isFalse();
        assertThat(watcher.current()).isSameAs(good);
        assertThat(watcher.failedReloads()).isEqualTo(2);
    }

    @Test
    void aBrokenFileAtStartup_isAnError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tenants.yaml");
        Files.writeString(file, "tenants: 5\n");
        assertThatThrownBy(() -> TenantDirectoryWatcher.open(file, null)).hasMessageContaining("must be a list");
    }
}
