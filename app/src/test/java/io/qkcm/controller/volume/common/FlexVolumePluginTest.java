package io.qkcm.controller.volume.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;

/**
 * The FlexVolume driver protocol and prober against real driver scripts, after upstream's
 * pkg/volume/flexvolume tests: driver-call_test.go (the defaults of an answer), plugin_test.go (init,
 * getvolumename), attacher_test.go and detacher_test.go (the arguments of attach, isattached, detach),
 * flexvolume_test.go TestCanSupport, and probe_test.go (the first probe reads every driver, later probes only
 * what changed: a driver added, a file added in its directory, its executable removed; a driver whose init
 * fails is an error).
 */
class FlexVolumePluginTest {

    @TempDir
    Path tmp;

    /** A spec as a controller hands it to the driver calls. */
    record TestSpec(Volume volume, io.fabric8.kubernetes.api.model.PersistentVolume persistentVolume, boolean readOnly)
            implements FlexVolumePlugin.Spec {
        static TestSpec fromVolume(Volume v) {
            return new TestSpec(v, null, false);
        }

        static TestSpec fromPersistentVolume(io.fabric8.kubernetes.api.model.PersistentVolume pv, boolean readOnly) {
            return new TestSpec(null, pv, readOnly);
        }

        @Override
        public String name() {
            return volume != null ? volume.getName() : persistentVolume.getMetadata().getName();
        }
    }

    static TestSpec fakeVolumeSpec(String driver) {
        return TestSpec.fromVolume(new VolumeBuilder().withName("vol1").withNewFlexVolume().withDriver(driver)
                .withReadOnly(false).endFlexVolume().build());
    }

    private FlexDriver driver(String vendor, String name) {
        Path pluginDir = tmp.resolve("plugins");
        return FlexDriver.of(pluginDir, vendor, name, tmp.resolve("work-" + name))
                .answer("init", "{\"status\": \"Success\"}");
    }

    // --- driver-call_test.go

    @Test
    void handleResponseDefaults() {
        FlexVolumePlugin.DriverStatus ds = FlexVolumePlugin.handleCmdResponse("test", "{\"status\": \"Success\"}");
        assertThat(ds.capabilities()).isEqualTo(FlexVolumePlugin.Capabilities.DEFAULT);
        assertThat(FlexVolumePlugin.Capabilities.DEFAULT)
                .isEqualTo(new FlexVolumePlugin.Capabilities(true, true, false, true, true));
    }

    @Test
    void answersParseAsGoUnmarshalsThem() {
        // a capability left out keeps its default; keys match case-insensitively
        var ds = FlexVolumePlugin.handleCmdResponse("init",
                "{\"Status\": \"Success\", \"capabilities\": {\"attach\": false}, \"device\": \"/dev/x\", \"attached\": true, \"volumeNewSize\": 5}");
        assertThat(ds.capabilities()).isEqualTo(new FlexVolumePlugin.Capabilities(false, true, false, true, true));
        assertThat(ds.devicePath()).isEqualTo("/dev/x");
        assertThat(ds.attached()).isTrue();
        assertThat(ds.actualVolumeSize()).isEqualTo(5);
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("attach", "{\"status\": \"Failure\", \"message\": \"no disk\"}"))
                .hasMessage("attach command failed, status: Failure, reason: no disk");
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("attach", "{\"status\": \"Not supported\"}"))
                .isInstanceOfSatisfying(FlexVolumePlugin.DriverCallException.class, e -> assertThat(e.notSupported()).isTrue());
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("attach", "{}"))
                .hasMessage("attach command failed, status: , reason: ");
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("attach", ""))
                .hasMessage("unexpected end of JSON input");
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("attach", "mount: permission denied"))
                .hasMessage("invalid character 'm' looking for beginning of value");
        assertThatThrownBy(() -> FlexVolumePlugin.handleCmdResponse("isattached", "{\"status\": \"Success\", \"attached\": \"yes\"}"))
                .hasMessage("json: cannot unmarshal string into Go struct field DriverStatus.attached of type bool");
    }

    // --- plugin_test.go, attacher_test.go, detacher_test.go, flexvolume_test.go

    @Test
    void initGetVolumeNameAttachIsAttachedDetachCallTheDriverWithUpstreamsArguments() {
        FlexDriver d = driver("kubernetes.io", "fakeAttacher").answer("getvolumename", "{\"status\": \"Success\", \"volumeName\": \"ignored\"}")
                .answer("attach", "{\"status\": \"Success\", \"device\": \"/dev/sdx\"}")
                .answer("isattached", "{\"status\": \"Success\", \"attached\": false}")
                .answer("detach", "{\"status\": \"Success\"}").install();
        FlexVolumePlugin plugin = FlexVolumePlugin.probe(d.pluginDir, "kubernetes.io~fakeAttacher");
        assertThat(plugin.name()).isEqualTo("kubernetes.io/fakeAttacher");
        assertThat(plugin.attachable()).isTrue();
        TestSpec spec = fakeVolumeSpec("kubernetes.io/fakeAttacher");
        String specJson = "{\"kubernetes.io/fsType\":\"\",\"kubernetes.io/pvOrVolumeName\":\"vol1\",\"kubernetes.io/readwrite\":\"rw\"}";
        assertThat(FlexVolumePlugin.specJson(spec)).isEqualTo(specJson);

        // GetVolumeName asks the driver but keeps the spec's name
        assertThat(plugin.volumeName(spec)).isEqualTo("vol1");
        assertThat(plugin.attach(spec, "localhost")).isEqualTo("/dev/sdx");
        assertThat(plugin.volumesAreAttached(List.of(spec), "localhost")).containsEntry(spec, false);
        plugin.detach("sdx", "localhost");
        assertThat(d.calls()).containsExactly("init", "getvolumename " + specJson, "attach " + specJson + " localhost",
                "isattached " + specJson + " localhost", "detach sdx localhost");

        // CanSupport: an inline or a PV flex source of this driver
        assertThat(plugin.canSupport(spec)).isTrue();
        assertThat(plugin.canSupport(TestSpec.fromPersistentVolume(new PersistentVolumeBuilder().withNewMetadata()
                .withName("pv").endMetadata().withNewSpec().withNewFlexVolume().withDriver("kubernetes.io/fakeAttacher")
                .endFlexVolume().endSpec().build(), false))).isTrue();
        assertThat(plugin.canSupport(TestSpec.fromVolume(new VolumeBuilder().withName("e").withNewEmptyDir().endEmptyDir()
                .build()))).isFalse();
    }

    @Test
    void notSupportedCallsFallBackToTheDefaultsAndAreNotRunAgain() {
        FlexDriver d = driver("vendor", "plain").install();
        FlexVolumePlugin plugin = FlexVolumePlugin.probe(d.pluginDir, "vendor~plain");
        TestSpec spec = fakeVolumeSpec("vendor/plain");
        assertThat(plugin.attach(spec, "n1")).isEmpty();
        assertThat(plugin.attach(spec, "n1")).isEmpty();
        assertThat(plugin.volumesAreAttached(List.of(spec), "n1")).isNull();
        plugin.detach("vol1", "n1");
        plugin.detach("vol1", "n1");
        assertThat(d.calls("attach")).hasSize(1);
        assertThat(d.calls("isattached")).hasSize(1);
        assertThat(d.calls("detach")).hasSize(1);
    }

    @Test
    void aFailingDriverReportsItsAnswerAndExitStatus() {
        FlexDriver d = driver("vendor", "failing").answer("attach", "{\"status\": \"Failure\", \"message\": \"disk busy\"}", 1)
                .answer("detach", "{\"status\": \"Success\"}", 3).install();
        FlexVolumePlugin plugin = FlexVolumePlugin.probe(d.pluginDir, "vendor~failing");
        TestSpec spec = fakeVolumeSpec("vendor/failing");
        assertThatThrownBy(() -> plugin.attach(spec, "n1")).hasMessage("attach command failed, status: Failure, reason: disk busy");
        // a Success answer with a failing exit status is a driver bug: the exit status is the error
        assertThatThrownBy(() -> plugin.detach("vol1", "n1")).hasMessage("exit status 3");
        // failures are retried (not cached as unsupported)
        assertThatThrownBy(() -> plugin.attach(spec, "n1")).hasMessageContaining("disk busy");
        assertThat(d.calls("attach")).hasSize(2);
    }

    @Test
    void optionsCarryTheSourcesOptionsAndThePvReadOnlyFromTheClaim() {
        var pv = new PersistentVolumeBuilder().withNewMetadata().withName("pv-1").endMetadata().withNewSpec()
                .withNewFlexVolume().withDriver("v/d").withFsType("ext4").withOptions(Map.of("size", "1G",
                        "kubernetes.io/readwrite", "custom")).endFlexVolume().endSpec().build();
        assertThat(FlexVolumePlugin.optionsForDriver(TestSpec.fromPersistentVolume(pv, true))).containsExactlyEntriesOf(
                new java.util.TreeMap<>(Map.of("kubernetes.io/fsType", "ext4", "kubernetes.io/pvOrVolumeName", "pv-1",
                        "kubernetes.io/readwrite", "custom", "size", "1G")));
        Volume inline = new VolumeBuilder().withName("data").withNewFlexVolume().withDriver("v/d").withReadOnly(true)
                .endFlexVolume().build();
        assertThat(FlexVolumePlugin.optionsForDriver(TestSpec.fromVolume(inline))).containsEntry("kubernetes.io/readwrite", "ro")
                .containsEntry("kubernetes.io/pvOrVolumeName", "data").containsEntry("kubernetes.io/fsType", "");
    }

    // --- probe_test.go

    private static List<FlexVolumeProber.ProbeEvent> probeUntil(FlexVolumeProber prober, int events) {
        List<FlexVolumeProber.ProbeEvent> seen = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            seen.addAll(prober.probe().events());
            return seen.size() >= events;
        });
        return seen;
    }

    @Test
    void theProberReadsExistingDriversOnceThenWhatChanges() throws Exception {
        FlexDriver first = driver("vendor", "first").install();
        Files.createDirectories(first.pluginDir.resolve(".hidden"));
        try (FlexVolumeProber prober = new FlexVolumeProber(first.pluginDir)) {
            prober.init();
            var result = prober.probe();
            assertThat(result.events()).extracting(FlexVolumeProber.ProbeEvent::pluginName).containsExactly("vendor/first");
            assertThat(result.errors()).isEmpty();
            assertThat(prober.probe().events()).isEmpty();

            // a driver added while running
            FlexDriver second = driver("vendor", "second").install();
            var added = probeUntil(prober, 1);
            assertThat(added).allMatch(e -> !e.remove() && e.pluginName().equals("vendor/second"));
            // (its directory and its executable may come as two changes, each probed)
            assertThat(second.calls("init")).isNotEmpty();

            // a file added in its directory re-probes it
            Files.writeString(second.pluginDir.resolve("vendor~second").resolve("dummyfile"), "x");
            assertThat(probeUntil(prober, 1)).allMatch(e -> !e.remove() && e.pluginName().equals("vendor/second"));

            // its executable removed: the plugin goes
            Files.delete(second.pluginDir.resolve("vendor~second").resolve("second"));
            var removed = probeUntil(prober, 1);
            assertThat(removed).last().matches(FlexVolumeProber.ProbeEvent::remove)
                    .extracting(FlexVolumeProber.ProbeEvent::pluginName).isEqualTo("vendor/second");
            assertThat(first.calls("init")).hasSize(1);
        }
    }

    @Test
    void anEmptyOrMissingPluginDirProbesNothingAndIsCreated() throws Exception {
        Path dir = tmp.resolve("missing");
        try (FlexVolumeProber prober = new FlexVolumeProber(dir)) {
            prober.init();
            assertThat(Files.isDirectory(dir)).isTrue();
            var result = prober.probe();
            assertThat(result.events()).isEmpty();
            assertThat(result.errors()).isEmpty();
        }
    }

    @Test
    void aDriverWhoseInitFailsIsAnErrorAndTheOthersStillProbe() throws Exception {
        driver("vendor", "good").install();
        FlexDriver bad = driver("vendor", "bad").answer("init", "{\"status\": \"Failure\", \"message\": \"no kernel module\"}", 1)
                .install();
        try (FlexVolumeProber prober = new FlexVolumeProber(bad.pluginDir)) {
            prober.init();
            var result = prober.probe();
            assertThat(result.events()).extracting(FlexVolumeProber.ProbeEvent::pluginName).containsExactly("vendor/good");
            assertThat(result.errors()).containsExactly("error creating Flexvolume plugin from directory vendor~bad, "
                    + "skipping. Error: init command failed, status: Failure, reason: no kernel module");
        }
    }

    @Test
    void pluginNamesMustBeQualifiedNames() {
        assertThat(FlexVolumePlugins.qualifiedNameError("vendor/driver")).isNull();
        assertThat(FlexVolumePlugins.qualifiedNameError("driver")).isNull();
        assertThat(FlexVolumePlugins.qualifiedNameError("a/b/c")).isNotNull();
        assertThat(FlexVolumePlugins.qualifiedNameError("Vendor_X/driver")).isNotNull();
        assertThat(FlexVolumePlugins.qualifiedNameError("vendor/-driver")).isNotNull();
    }
}
