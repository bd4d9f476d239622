package io.qkcm.controller.volume.attachdetach;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.qkcm.runtime.Json;

/**
 * The controller's plugins (csi, fc, iscsi): unique volume names against vectors printed by upstream's own
 * GetUniqueVolumeNameFromSpec with those plugins (hack/golden/csiattachment/volumenames), which specs each
 * supports and attaches, and the metrics' names, types and labels as the Prometheus text shows them.
 */
class VolumePluginsTest {

    @Test
    void uniqueVolumeNamesAreUpstreams() throws Exception {
        int n = 0;
        int errors = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                VolumePluginsTest.class.getResourceAsStream("/attachdetach/volume-unique-names.jsonl"),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                JsonNode v = Json.mapper().readTree(line);
                VolumeSpec spec = v.has("pv")
                        ? VolumeSpec.fromPersistentVolume(Json.mapper().treeToValue(v.get("pv"), PersistentVolume.class), false)
                        : VolumeSpec.fromVolume(Json.mapper().treeToValue(v.get("volume"), Volume.class));
                if (v.path("error").asBoolean()) {
                    assertThatThrownBy(() -> VolumePlugins.uniqueVolumeName(spec)).as(line)
                            .isInstanceOf(IllegalStateException.class);
                    errors++;
                } else {
                    assertThat(VolumePlugins.uniqueVolumeName(spec)).as(line).isEqualTo(v.get("uniqueName").asText());
                }
                n++;
            }
        }
        assertThat(n).isEqualTo(13);
        assertThat(errors).isEqualTo(3);
    }

    static Volume fcVolume(String name) {
        return new VolumeBuilder().withName(name).withNewFc().withTargetWWNs("500a0981891b8dc5").withLun(1).endFc().build();
    }

    @Test
    void fcAndIscsiAreAlwaysAttachableAndCsiAsItsDriverSays() {
        VolumePlugins plugins = new VolumePlugins(new CsiPlugin(name -> null));
        VolumeSpec fc = VolumeSpec.fromVolume(fcVolume("fc"));
        VolumeSpec iscsi = VolumeSpec.fromVolume(new VolumeBuilder().withName("i").withNewIscsi().withTargetPortal("p")
                .withIqn("iqn").withLun(0).endIscsi().build());
        VolumeSpec inlineCsi = VolumeSpec.fromVolume(new VolumeBuilder().withName("c").withNewCsi().withDriver("d").endCsi()
                .build());
        VolumeSpec emptyDir = VolumeSpec.fromVolume(new VolumeBuilder().withName("e").withNewEmptyDir().endEmptyDir().build());
        VolumeSpec csiPV = VolumeSpec.fromPersistentVolume(CsiPluginTest.csiPV("d", "h", "ReadWriteOnce"), false);
        assertThat(VolumePlugins.findPluginBySpec(fc)).isEqualTo("kubernetes.io/fc");
        assertThat(VolumePlugins.findPluginBySpec(iscsi)).isEqualTo("kubernetes.io/iscsi");
        assertThat(VolumePlugins.findPluginBySpec(inlineCsi)).isEqualTo("kubernetes.io/csi");
        assertThat(VolumePlugins.findPluginBySpec(emptyDir)).isNull();
        assertThat(VolumePlugins.findPluginBySpec(null)).isNull();
        assertThat(plugins.isAttachable(fc)).isTrue();
        assertThat(plugins.isAttachable(iscsi)).isTrue();
        assertThat(plugins.isAttachable(inlineCsi)).isFalse();
        assertThat(plugins.isAttachable(emptyDir)).isFalse();
        assertThat(plugins.isAttachable(csiPV)).isTrue();
        // GetFullQualifiedPluginNameForVolume
        assertThat(VolumePlugins.fullQualifiedPluginName("kubernetes.io/csi", csiPV)).isEqualTo("kubernetes.io/csi:d");
        assertThat(VolumePlugins.fullQualifiedPluginName("kubernetes.io/csi", inlineCsi)).isEqualTo("kubernetes.io/csi:d");
        assertThat(VolumePlugins.fullQualifiedPluginName("kubernetes.io/fc", fc)).isEqualTo("kubernetes.io/fc");
        assertThat(VolumePlugins.fullQualifiedPluginName("<n/a>", null)).isEqualTo("<n/a>");
    }

    /**
     * The four metrics as Micrometer's Prometheus scrape shows them: upstream's names (the forced-detach counter
     * with the {@code _total} suffix that /metrics takes off, manager.serving's UpstreamCounterNames), labels, and
     * the operation histogram's buckets.
     */
    @Test
    void metricsAreExposedUnderUpstreamsNames() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        AttachDetachMetrics metrics = new AttachDetachMetrics(registry);
        VolumePlugins plugins = new VolumePlugins(new CsiPlugin(name -> null));
        DesiredStateOfWorld dsw = new DesiredStateOfWorld(plugins);
        ActualStateOfWorld asw = new ActualStateOfWorld(java.time.Clock.systemUTC());
        dsw.addNode("node-1");
        Pod pod = new PodBuilder().withMetadata(new ObjectMetaBuilder().withName("p").withNamespace("ns").withUid("uid-1")
                .build()).withNewSpec().withNodeName("node-1").withVolumes(fcVolume("fc")).endSpec().build();
        VolumeSpec fc = VolumeSpec.fromVolume(fcVolume("fc"));
        dsw.addPod("uid-1", pod, fc, "node-1");
        VolumeSpec csiPV = VolumeSpec.fromPersistentVolume(CsiPluginTest.csiPV("ebs.csi.aws.com", "vol-1", "ReadWriteOnce"),
                false);
        asw.markVolumeAsAttached(null, csiPV, "node-1", "");
        asw.markVolumeAsAttached("kubernetes.io/csi/gone^h", null, "node-1", ""); // no spec: not counted
        metrics.update(dsw, asw, Map.of("node-1", Map.of("kubernetes.io/fc", 1L, "kubernetes.io/csi:ebs.csi.aws.com", 2L)), plugins);
        metrics.recordForcedDetach(AttachDetachMetrics.FORCE_DETACH_REASON_TIMEOUT);
        metrics.recordForcedDetach(AttachDetachMetrics.FORCE_DETACH_REASON_TIMEOUT);
        metrics.recordForcedDetach(AttachDetachMetrics.FORCE_DETACH_REASON_OUT_OF_SERVICE);
        metrics.operationComplete("kubernetes.io/csi:ebs.csi.aws.com", OperationExecutor.ATTACH, false, false, System.nanoTime());
        metrics.operationComplete("kubernetes.io/fc", OperationExecutor.DETACH, true, false, System.nanoTime());

        String text = registry.scrape();
        assertThat(text).contains(
                "attachdetach_controller_total_volumes{plugin_name=\"kubernetes.io/fc\",state=\"desired_state_of_world\",} 1.0",
                "attachdetach_controller_total_volumes{plugin_name=\"kubernetes.io/csi:ebs.csi.aws.com\",state=\"actual_state_of_world\",} 1.0",
                "storage_count_attachable_volumes_in_use{node=\"node-1\",volume_plugin=\"kubernetes.io/fc\",} 1.0",
                "storage_count_attachable_volumes_in_use{node=\"node-1\",volume_plugin=\"kubernetes.io/csi:ebs.csi.aws.com\",} 2.0",
                "# TYPE attach_detach_controller_attachdetach_controller_forced_detaches_total counter",
                "attach_detach_controller_attachdetach_controller_forced_detaches_total{reason=\"timeout\",} 2.0",
                "attach_detach_controller_attachdetach_controller_forced_detaches_total{reason=\"out-of-service\",} 1.0",
                "storage_operation_duration_seconds_bucket{migrated=\"false\",operation_name=\"volume_attach\",status=\"success\",volume_plugin=\"kubernetes.io/csi:ebs.csi.aws.com\",le=\"0.1\",} 1.0",
                "storage_operation_duration_seconds_bucket{migrated=\"false\",operation_name=\"volume_attach\",status=\"success\",volume_plugin=\"kubernetes.io/csi:ebs.csi.aws.com\",le=\"600.0\",} 1.0",
                "storage_operation_duration_seconds_count{migrated=\"false\",operation_name=\"volume_detach\",status=\"fail-unknown\",volume_plugin=\"kubernetes.io/fc\",} 1.0");
        assertThat(text).doesNotContain("gone");
        assertThat(text.lines().filter(l -> l.startsWith("attachdetach_controller_total_volumes{")).count()).isEqualTo(2);
        // the gauges are replaced at each pass: a volume no state has any more is no series any more
        dsw.deletePod("uid-1", VolumePlugins.uniqueVolumeName(fc), "node-1");
        metrics.update(dsw, asw, Map.of(), plugins);
        String after = registry.scrape();
        assertThat(after).doesNotContain("state=\"desired_state_of_world\"").doesNotContain(
                "storage_count_attachable_volumes_in_use{");
        assertThat(after).contains(
                "attachdetach_controller_total_volumes{plugin_name=\"kubernetes.io/csi:ebs.csi.aws.com\",state=\"actual_state_of_world\",} 1.0");
        assertThat(List.of(after.split("\n"))).anyMatch(l -> l.startsWith("# TYPE storage_operation_duration_seconds histogram"));
    }
}
