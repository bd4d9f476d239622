package io.qkcm.controller.volume.attachdetach;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Volume;
import io.qkcm.runtime.Json;

/**
 * CSI migration of aws-ebs, azure-disk, azure-file, cinder, gce-pd, vsphere and portworx PVs and inline volumes against vectors printed by upstream's
 * own csimigration.TranslateInTreeSpecToCSI with csi-translation-lib (hack/golden/csiattachment/volumemigration):
 * the translated PV (topology keys included), the inline flag, the unique volume name and the
 * VolumeAttachment name.
 */
class CsiMigrationTest {

    /** Go's JSON and fabric8's differ in empty fields: both read into the model and written by the one serializer. */
    static JsonNode normalized(Object pv) throws Exception {
        PersistentVolume model = pv instanceof JsonNode n ? Json.mapper().treeToValue(n, PersistentVolume.class)
                : (PersistentVolume) pv;
        JsonNode tree = Json.mapper().readTree(Json.mapper().writeValueAsString(model));
        if (tree.path("status").isEmpty()) {
            ((com.fasterxml.jackson.databind.node.ObjectNode) tree).remove("status"); // Go writes an empty status
        }
        return tree;
    }

    @Test
    void translationsAreUpstreams() throws Exception {
        int n = 0;
        int errors = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                CsiMigrationTest.class.getResourceAsStream("/attachdetach/csi-migration.jsonl"), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                JsonNode v = Json.mapper().readTree(line);
                VolumeSpec spec = v.has("pv")
                        ? VolumeSpec.fromPersistentVolume(Json.mapper().treeToValue(v.get("pv"), PersistentVolume.class), false)
                        : VolumeSpec.fromVolume(Json.mapper().treeToValue(v.get("volume"), Volume.class));
                assertThat(CsiMigration.inTreePluginName(spec)).as(line).isEqualTo(v.get("inTreePlugin").asText());
                String ns = v.path("podNamespace").asText("");
                n++;
                if (v.path("error").asBoolean()) {
                    assertThatThrownBy(() -> CsiMigration.translate(spec, ns)).as(line).isInstanceOf(IllegalStateException.class);
                    errors++;
                    continue;
                }
                PersistentVolume before = Json.mapper().treeToValue(Json.mapper().valueToTree(spec.persistentVolume() != null
                        ? spec.persistentVolume() : new PersistentVolume()), PersistentVolume.class);
                VolumeSpec translated = CsiMigration.translate(spec, ns);
                assertThat(translated.migrated()).isTrue();
                assertThat(translated.inlineVolumeSpecForCSIMigration()).as(line).isEqualTo(v.path("inline").asBoolean());
                assertThat(normalized(translated.persistentVolume())).as(line).isEqualTo(normalized(v.get("translated")));
                assertThat(VolumePlugins.uniqueVolumeName(translated)).as(line).isEqualTo(v.get("uniqueName").asText());
                assertThat(CsiPlugin.attachmentName(translated.csi().getVolumeHandle(), translated.csi().getDriver(), "node-1"))
                        .as(line).isEqualTo(v.get("attachmentName").asText());
                if (spec.persistentVolume() != null) {
                    // the translation works on a copy: the cached PV is untouched
                    assertThat(spec.persistentVolume()).isEqualTo(before);
                }
            }
        }
        assertThat(n).isEqualTo(33);
        assertThat(errors).isEqualTo(5);
    }

    /**
     * An inline vSphere volume with a storage policy makes upstream's translation dereference a nil source (a
     * panic); here the translation fails and the volume is skipped.
     */
    @Test
    void anInlineVsphereVolumeWithAStoragePolicyIsNotTranslated() {
        VolumeSpec spec = VolumeSpec.fromVolume(new io.fabric8.kubernetes.api.model.VolumeBuilder().withName("v")
                .withNewVsphereVolume().withVolumePath("[ds] d.vmdk").withStoragePolicyName("gold").endVsphereVolume().build());
        assertThat(CsiMigration.inTreePluginName(spec)).isEqualTo("kubernetes.io/vsphere-volume");
        assertThatThrownBy(() -> CsiMigration.translate(spec, "ns")).isInstanceOf(IllegalStateException.class);
    }
}
