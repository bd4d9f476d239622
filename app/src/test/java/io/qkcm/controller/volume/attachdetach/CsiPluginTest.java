package io.qkcm.controller.volume.attachdetach;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.AttachedVolume;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.qkcm.runtime.Json;

/**
 * The CSI plugin's controller side: VolumeAttachment names against vectors printed by upstream's own
 * getAttachmentName (hack/golden/csiattachment), unique volume names, which specs are attached
 * (csi_plugin_test.go's CanAttach cases), util.IsMultiAttachAllowed's table, and the node status patch.
 */
class CsiPluginTest {

    @Test
    void attachmentNamesAreUpstreams() throws Exception {
        int n = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                CsiPluginTest.class.getResourceAsStream("/attachdetach/csi-attachment-names.jsonl"), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                JsonNode v = Json.mapper().readTree(line);
                assertThat(CsiPlugin.attachmentName(v.get("volumeHandle").asText(), v.get("driver").asText(),
                        v.get("nodeName").asText())).as(line).isEqualTo(v.get("name").asText());
                n++;
            }
        }
        assertThat(n).isEqualTo(6);
    }

    static PersistentVolume csiPV(String driver, String handle, String... accessModes) {
        return new PersistentVolumeBuilder().withNewMetadata().withName("pv-" + handle).endMetadata().withNewSpec()
                .withAccessModes(accessModes).withNewCsi().withDriver(driver).withVolumeHandle(handle).endCsi().endSpec().build();
    }

    static CSIDriver driver(String name, Boolean attachRequired) {
        return new CSIDriverBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withAttachRequired(attachRequired).endSpec().build();
    }

    @Test
    void attachableAsUpstreamsCanAttach() {
        Map<String, CSIDriver> drivers = Map.of("attach", driver("attach", true), "skip", driver("skip", false),
                "unset", driver("unset", null));
        CsiPlugin plugin = new CsiPlugin(drivers::get);
        assertThat(plugin.isAttachable(VolumeSpec.fromPersistentVolume(csiPV("attach", "h"), false))).isTrue();
        assertThat(plugin.isAttachable(VolumeSpec.fromPersistentVolume(csiPV("skip", "h"), false))).isFalse();
        // attachRequired unset: the API defaults it to true; no CSIDriver object at all: attached
        assertThat(plugin.isAttachable(VolumeSpec.fromPersistentVolume(csiPV("unset", "h"), false))).isTrue();
        assertThat(plugin.isAttachable(VolumeSpec.fromPersistentVolume(csiPV("absent", "h"), false))).isTrue();
        // an inline CSI volume is ephemeral: never attached
        assertThat(plugin.isAttachable(VolumeSpec.fromVolume(new VolumeBuilder().withName("v").withNewCsi()
                .withDriver("attach").endCsi().build()))).isFalse();
        // not CSI at all
        assertThat(plugin.isAttachable(VolumeSpec.fromVolume(new VolumeBuilder().withName("v").withNewEmptyDir()
                .endEmptyDir().build()))).isFalse();
        assertThat(plugin.isAttachable(VolumeSpec.fromPersistentVolume(new PersistentVolumeBuilder().withNewMetadata()
                .withName("nfs").endMetadata().withNewSpec().withNewNfs().withServer("s").withPath("/").endNfs().endSpec()
                .build(), false))).isFalse();
    }

    @Test
    void uniqueVolumeNamesAndTheirSplit() {
        VolumeSpec spec = VolumeSpec.fromPersistentVolume(csiPV("csi.example.com", "vol-1"), false);
        assertThat(CsiPlugin.uniqueVolumeName(spec)).isEqualTo("kubernetes.io/csi/csi.example.com^vol-1");
        assertThat(CsiPlugin.driverAndHandle("kubernetes.io/csi/csi.example.com^vol-1"))
                .containsExactly("csi.example.com", "vol-1");
        assertThat(CsiPlugin.driverAndHandle("kubernetes.io/iscsi/portal:iqn:0")).isNull();
        assertThat(CsiPlugin.driverAndHandle("kubernetes.io/csi/no-separator")).isNull();
    }

    /** pkg/volume/util's util_test.go TestIsMultiAttachAllowed. */
    @Test
    void multiAttachAllowedAsUpstream() {
        assertThat(CsiPlugin.isMultiAttachAllowed(null)).isTrue();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromVolume(new VolumeBuilder().withName("a")
                .withNewAzureDisk().withDiskName("d").withDiskURI("u").endAzureDisk().build()))).isFalse();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromVolume(new VolumeBuilder().withName("c")
                .withNewCinder().withVolumeID("v").endCinder().build()))).isFalse();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromVolume(new VolumeBuilder().withName("e")
                .withNewEmptyDir().endEmptyDir().build()))).isTrue();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromPersistentVolume(csiPV("d", "h"), false))).isTrue();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromPersistentVolume(csiPV("d", "h", "ReadWriteOnce"), false)))
                .isFalse();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromPersistentVolume(csiPV("d", "h", "ReadWriteOncePod"), false)))
                .isFalse();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromPersistentVolume(csiPV("d", "h", "ReadWriteOnce", "ReadOnlyMany"), false)))
                .isTrue();
        assertThat(CsiPlugin.isMultiAttachAllowed(VolumeSpec.fromPersistentVolume(csiPV("d", "h", "ReadWriteMany"), false)))
                .isTrue();
    }

    /** statusupdater: the strategic merge patch PatchNodeStatus sends for volumesAttached (an atomic list). */
    @Test
    void nodeStatusPatch() {
        Node empty = new NodeBuilder().withNewMetadata().withName("n").endMetadata().build();
        AttachedVolume a = new AttachedVolume("", "kubernetes.io/csi/d^a");
        assertThat(NodeStatusUpdater.patch(empty, List.of())).isEqualTo("{}");
        assertThat(NodeStatusUpdater.patch(empty, List.of(a)))
                .isEqualTo("{\"status\":{\"volumesAttached\":[{\"name\":\"kubernetes.io/csi/d^a\",\"devicePath\":\"\"}]}}");
        Node withA = new NodeBuilder(empty).withNewStatus().withVolumesAttached(a).endStatus().build();
        assertThat(NodeStatusUpdater.patch(withA, List.of(a))).isEqualTo("{}");
        assertThat(NodeStatusUpdater.patch(withA, List.of())).isEqualTo("{\"status\":{\"volumesAttached\":null}}");
    }
}
