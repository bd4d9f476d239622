package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;

/** The in-tree plugins' pure parts: recycler pods and their timeouts, templates, the deleter's /tmp rule. */
class InTreePluginsTest {

    static PersistentVolume hostPathVolume(String name, String size, String path) {
        return new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity(size))).withNewHostPath().withPath(path).endHostPath()
                .endSpec().build();
    }

    @Test
    void theTimeoutIsTheIncrementPerWholeGiAndAtLeastTheMinimum() {
        // CalculateTimeoutForVolume's table: whole Gi only, never below the minimum
        assertThat(InTreePlugins.calculateTimeoutForVolume(50, 30, hostPathVolume("a", "2Gi", "/tmp/a"))).isEqualTo(60);
        assertThat(InTreePlugins.calculateTimeoutForVolume(50, 30, hostPathVolume("a", "150Mi", "/tmp/a"))).isEqualTo(50);
        assertThat(InTreePlugins.calculateTimeoutForVolume(50, 30, hostPathVolume("a", "1.5Gi", "/tmp/a"))).isEqualTo(50);
        assertThat(InTreePlugins.calculateTimeoutForVolume(60, 30, hostPathVolume("a", "10Gi", "/tmp/a"))).isEqualTo(300);
    }

    @Test
    void aRecyclerPodIsTheTemplateWithTheVolumesSourceAndName() {
        InTreePlugins plugins = InTreePlugins.of(60, 30, "", 300, 30, "", false);
        Pod pod = plugins.recyclerPod(InTreePlugins.HOST_PATH, hostPathVolume("pv1", "1Gi", "/tmp/pv1"));
        assertThat(pod.getMetadata().getName()).isEqualTo("recycler-for-pv1");
        assertThat(pod.getMetadata().getGenerateName()).isNull();
        assertThat(pod.getMetadata().getNamespace()).isEqualTo("default");
        assertThat(pod.getSpec().getVolumes().get(0).getHostPath().getPath()).isEqualTo("/tmp/pv1");
        assertThat(pod.getSpec().getContainers().get(0).getImage())
                .isEqualTo("registry.k8s.io/build-image/debian-base:bookworm-v1.0.6");
        // the template itself is not changed
        assertThat(plugins.hostPath.template().getSpec().getVolumes().get(0).getHostPath()).isNull();
        assertThatThrownBy(() -> plugins.recyclerPod(InTreePlugins.NFS, hostPathVolume("pv1", "1Gi", "/tmp/pv1")))
                .hasMessage("spec.PersistentVolumeSource.NFS is nil");
    }

    @Test
    void aTemplateFileIsReadAndMustHaveAVolume(@TempDir Path dir) throws Exception {
        Path good = dir.resolve("good.yaml");
        Files.writeString(good, """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: custom
                  namespace: recyclers
                spec:
                  restartPolicy: Never
                  volumes:
                  - name: scrub-me
                  containers:
                  - name: scrubber
                    image: example.com/scrub:1
                """);
        Pod pod = InTreePlugins.loadRecycler(good.toString(), "hostpath");
        assertThat(pod.getMetadata().getNamespace()).isEqualTo("recyclers");
        InTreePlugins plugins = new InTreePlugins(new InTreePlugins.RecyclerConfig(pod, 10, 5),
                new InTreePlugins.RecyclerConfig(pod, 10, 5), false, dir);
        Pod recycler = plugins.recyclerPod(InTreePlugins.HOST_PATH, hostPathVolume("pv2", "4Gi", "/tmp/pv2"));
        assertThat(recycler.getSpec().getVolumes().get(0).getName()).isEqualTo("scrub-me");
        assertThat(recycler.getSpec().getVolumes().get(0).getHostPath().getPath()).isEqualTo("/tmp/pv2");
        assertThat(recycler.getSpec().getActiveDeadlineSeconds()).isEqualTo(20L);
        assertThat(recycler.getMetadata().getName()).isEqualTo("recycler-for-pv2");

        Path noVolume = dir.resolve("novol.yaml");
        Files.writeString(noVolume, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: c\n");
        assertThatThrownBy(() -> InTreePlugins.loadRecycler(noVolume.toString(), "NFS"))
                .hasMessageEndingWith("pod specification (" + noVolume + "): does not contain any volume(s)");
        Path empty = dir.resolve("empty.yaml");
        Files.writeString(empty, "");
        assertThatThrownBy(() -> InTreePlugins.loadRecycler(empty.toString(), "NFS")).hasMessageEndingWith("file was empty: " + empty);
        assertThatThrownBy(() -> InTreePlugins.loadRecycler(dir.resolve("missing").toString(), "NFS"))
                .hasMessageContaining("failed to read file path");
    }

    @Test
    void theDeleterRemovesOnlyPathsUnderTmp() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "intree-");
        Files.createDirectories(dir.resolve("a/b"));
        Files.writeString(dir.resolve("a/b/f"), "x");
        InTreePlugins.deleteHostPath(hostPathVolume("v", "1Gi", dir.toString()));
        assertThat(Files.exists(dir)).isFalse();
        // a missing directory is no error (os.RemoveAll)
        InTreePlugins.deleteHostPath(hostPathVolume("v", "1Gi", dir.toString()));
        assertThatThrownBy(() -> InTreePlugins.deleteHostPath(hostPathVolume("v", "1Gi", "/var/lib/data")))
                .hasMessage("host_path deleter only supports /tmp/.+ but received provided /var/lib/data");
        assertThatThrownBy(() -> InTreePlugins.deleteHostPath(hostPathVolume("v", "1Gi", "/tmp/")))
                .hasMessage("host_path deleter only supports /tmp/.+ but received provided /tmp/");
    }

    @Test
    void theProvisionerNeedsTheFlagAndRefusesBlockClaims(@TempDir Path dir) throws Exception {
        var claim = new PersistentVolumeClaimBuilder().withNewMetadata().withName("c").withNamespace("ns").endMetadata()
                .withNewSpec().withNewResources().addToRequests("storage", new Quantity("2Gi")).endResources().endSpec()
                .build();
        InTreePlugins off = new InTreePlugins(null, null, false, dir);
        assertThatThrownBy(() -> off.provisionHostPath("pv", claim, "Delete"))
                .hasMessage("provisioning in volume plugin \"kubernetes.io/host-path\" is disabled");
        InTreePlugins on = new InTreePlugins(null, null, true, dir);
        PersistentVolume pv = on.provisionHostPath("pv", claim, "Retain");
        assertThat(Files.isDirectory(Path.of(pv.getSpec().getHostPath().getPath()))).isTrue();
        assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
        assertThat(pv.getSpec().getPersistentVolumeReclaimPolicy()).isEqualTo("Retain");
        assertThat(pv.getSpec().getCapacity().get("storage")).isEqualTo(new Quantity("2Gi"));
        claim.getSpec().setVolumeMode("Block");
        assertThatThrownBy(() -> on.provisionHostPath("pv", claim, "Delete"))
                .hasMessage("kubernetes.io/host-path does not support block volume provisioning");
    }
}
