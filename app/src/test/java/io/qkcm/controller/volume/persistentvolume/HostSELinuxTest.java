package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * The host-path provisioner's SELinux step (host_path.go Provision: GetEnabled, then SetFileLabel with the
 * kubelet's shared container label): go-selinux's detection against this machine's and hand-written proc
 * files, and the label written for real by chcon (read back with {@code stat -c %C}); only "SELinux is
 * enabled" has to be assumed, as no machine here runs it.
 */
class HostSELinuxTest {

    private static PersistentVolumeClaim claim() {
        return new PersistentVolumeClaimBuilder().withNewMetadata().withName("c").withNamespace("ns").endMetadata()
                .withNewSpec().withNewResources().addToRequests("storage", new Quantity("1Gi")).endResources().endSpec()
                .build();
    }

    private static boolean procListsSELinuxfs() throws IOException {
        return Files.readString(Path.of("/proc/filesystems")).contains("\tselinuxfs\n");
    }

    @Test
    void thisHostHasNoSELinuxSoTheDirectoryGetsNoLabel(@TempDir Path dir) throws Exception {
        Assumptions.assumeFalse(procListsSELinuxfs(), "this host's kernel knows selinuxfs");
        HostSELinux host = HostSELinux.host();
        assertThat(host.findSELinuxfs()).isNull();
        assertThat(host.enabled()).isFalse();

        List<String> labelled = new ArrayList<>();
        HostSELinux disabled = new HostSELinux(Path.of(HostSELinux.SELINUXFS_MOUNT), Path.of("/proc/filesystems"),
                Path.of("/proc/self/mountinfo"), Path.of("/proc/thread-self/attr/current"),
                (p, l) -> labelled.add(p + " " + l));
        PersistentVolume pv = new InTreePlugins(null, null, true, dir).withSELinux(disabled)
                .provisionHostPath("pv", claim(), "Delete");
        assertThat(Files.isDirectory(Path.of(pv.getSpec().getHostPath().getPath()))).isTrue();
        assertThat(labelled).isEmpty();
    }

    @Test
    void detectionReadsTheMountsAsGoSELinuxDoes(@TempDir Path dir) throws Exception {
        Path filesystems = dir.resolve("filesystems");
        Path mountinfo = dir.resolve("mountinfo");
        Path current = dir.resolve("current");
        Path notSelinuxfs = Files.createDirectory(dir.resolve("selinux"));
        Files.writeString(mountinfo, "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
                + "31 22 0:27 / " + notSelinuxfs + " rw,relatime shared:8 - selinuxfs selinuxfs rw\n"
                + "32 22 0:28 / /other/selinux ro,relatime - selinuxfs selinuxfs ro\n");
        Files.writeString(current, "system_u:system_r:kernel_t:s0\0");
        assertThat(HostSELinux.selinuxfsMounts(Files.readAllLines(mountinfo)))
                .containsExactly(notSelinuxfs.toString(), "/other/selinux");
        assertThat(HostSELinux.readCon(current)).isEqualTo("system_u:system_r:kernel_t:s0");
        assertThat(HostSELinux.readCon(dir.resolve("missing"))).isEmpty();

        // the kernel knows no selinuxfs: the mounts are not even read
        Files.writeString(filesystems, "nodev\tsysfs\nnodev\tproc\n\text4\n");
        HostSELinux unknown = new HostSELinux(notSelinuxfs, filesystems, mountinfo, current, (p, l) -> {
        });
        assertThat(unknown.findSELinuxfs()).isNull();
        assertThat(unknown.enabled()).isFalse();

        // it does, and mountinfo names selinuxfs mounts, but none is one (statfs: the file system type)
        Files.writeString(filesystems, "nodev\tsysfs\nnodev\tselinuxfs\n\text4\n");
        HostSELinux listed = new HostSELinux(notSelinuxfs, filesystems, mountinfo, current, (p, l) -> {
        });
        assertThat(HostSELinux.verifySELinuxfsMount(notSelinuxfs)).isFalse();
        assertThat(listed.findSELinuxfs()).isNull();
        assertThat(listed.enabled()).isFalse();
    }

    @Test
    void enabledTheDirectoryGetsTheKubeletsSharedLabelThroughChcon(@TempDir Path dir) throws Exception {
        PersistentVolume pv = new InTreePlugins(null, null, true, dir)
                .withSELinux(HostSELinux.assuming(true, HostSELinux::chcon)).provisionHostPath("pv", claim(), "Delete");
        Path created = Path.of(pv.getSpec().getHostPath().getPath());
        Process stat = new ProcessBuilder("stat", "-c", "%C", created.toString()).redirectErrorStream(true).start();
        String label = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(stat.waitFor()).as(label).isZero();
        assertThat(label).isEqualTo("system_u:object_r:container_file_t:s0");
        assertThat(HostSELinux.KUBELET_CONTAINERS_SHARED_LABEL).isEqualTo(label);
        // chcon's failure is the error, its message the reason
        assertThatThrownBy(() -> HostSELinux.chcon(dir.resolve("missing"), label)).isInstanceOf(IOException.class)
                .hasMessageContaining("No such file or directory");
    }

    @Test
    void aLabelThatCannotBeSetFailsTheProvisioning(@TempDir Path dir) {
        // root on ext4 can set any label here, so the refusal comes from the seam
        InTreePlugins plugins = new InTreePlugins(null, null, true, dir).withSELinux(HostSELinux.assuming(true, (p, l) -> {
            throw new IOException("chcon: failed to change context of '" + p + "' to '" + l + "': Operation not supported");
        }));
        assertThatThrownBy(() -> plugins.provisionHostPath("pv", claim(), "Delete")).isInstanceOf(IOException.class)
                .hasMessageStartingWith("failed to set selinux label for \"" + dir + "/")
                .hasMessageEndingWith("to 'system_u:object_r:container_file_t:s0': Operation not supported");
    }
}
