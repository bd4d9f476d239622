package io.qkcm.controller.volume.persistentvolume;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.HostPathVolumeSource;
import io.fabric8.kubernetes.api.model.NFSVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.Json;

/**
 * The volume plugins upstream's binder is built with ({@code ProbeProvisionableRecyclableVolumePlugins}
 * filtered to provisioners, deleters and recyclers): host-path (recycle; delete; provision with
 * {@code --enable-hostpath-provisioner}), NFS (recycle) and Portworx (delete, {@link PortworxDeleter}; its
 * provisioning is migrated to pxd.portworx.com, so only a static Portworx PV is deleted in-tree). Upstream's
 * FC, iSCSI and CSI plugins are probed too but none of them provisions, deletes or recycles, so the filter
 * drops them.
 *
 * <p>Host-path recycling, deletion and provisioning act on the controller's own machine (a directory under
 * /tmp) and are meant, as upstream says, for single-node development clusters only.
 */
final class InTreePlugins {

    static final String HOST_PATH = "kubernetes.io/host-path";
    static final String NFS = "kubernetes.io/nfs";
    /** util.VolumeDynamicallyCreatedByKey. */
    static final String ANN_CREATED_BY = "kubernetes.io/createdby";
    private static final Pattern HOST_PATH_DELETABLE = Pattern.compile("/tmp/.+");
    private static final BigDecimal GI = BigDecimal.valueOf(1L << 30);

    /** volume.VolumeConfig's recycler half: the pod template and its timeouts (seconds). */
    record RecyclerConfig(Pod template, int minimumTimeout, int timeoutIncrement) {
    }

    final RecyclerConfig hostPath;
    final RecyclerConfig nfs;
    final boolean hostPathProvisioningEnabled;
    /** Where the host-path provisioner makes its directories: /tmp/hostpath_pv upstream, a test's dir in tests. */
    private final Path provisionRoot;
    /** The port of the local Portworx API the Portworx deleter tries first: 9001, a test's port in tests. */
    final int portworxLocalPort;
    /** The host's SELinux, as the host-path provisioner asks it. */
    private final HostSELinux selinux;

    InTreePlugins(RecyclerConfig hostPath, RecyclerConfig nfs, boolean hostPathProvisioningEnabled, Path provisionRoot) {
        this(hostPath, nfs, hostPathProvisioningEnabled, provisionRoot, PortworxDeleter.OSD_MGMT_DEFAULT_PORT);
    }

    InTreePlugins(RecyclerConfig hostPath, RecyclerConfig nfs, boolean hostPathProvisioningEnabled, Path provisionRoot,
            int portworxLocalPort) {
        this(hostPath, nfs, hostPathProvisioningEnabled, provisionRoot, portworxLocalPort, HostSELinux.host());
    }

    private InTreePlugins(RecyclerConfig hostPath, RecyclerConfig nfs, boolean hostPathProvisioningEnabled,
            Path provisionRoot, int portworxLocalPort, HostSELinux selinux) {
        this.hostPath = hostPath;
        this.nfs = nfs;
        this.hostPathProvisioningEnabled = hostPathProvisioningEnabled;
        this.provisionRoot = provisionRoot;
        this.portworxLocalPort = portworxLocalPort;
        this.selinux = selinux;
    }

    /** The same plugins with the Portworx deleter's local API on another port (tests). */
    InTreePlugins withPortworxLocalPort(int port) {
        return new InTreePlugins(hostPath, nfs, hostPathProvisioningEnabled, provisionRoot, port, selinux);
    }

    /** The same plugins asking another SELinux (tests). */
    InTreePlugins withSELinux(HostSELinux other) {
        return new InTreePlugins(hostPath, nfs, hostPathProvisioningEnabled, provisionRoot, portworxLocalPort, other);
    }

    static InTreePlugins of(int minHostPath, int incrementHostPath, String templateHostPath, int minNfs, int incrementNfs,
            String templateNfs, boolean enableHostPathProvisioning) {
        return new InTreePlugins(new RecyclerConfig(loadRecycler(templateHostPath, "hostpath"), minHostPath, incrementHostPath),
                new RecyclerConfig(loadRecycler(templateNfs, "NFS"), minNfs, incrementNfs), enableHostPathProvisioning,
                Path.of("/tmp", "hostpath_pv"));
    }

    // ---- VolumePluginMgr's lookups, over the three plugins ----

    /** FindPluginBySpec: the plugin's name, or null when none supports the volume. */
    static String pluginBySpec(PersistentVolume volume) {
        if (volume.getSpec().getHostPath() != null) {
            return HOST_PATH;
        }
        if (volume.getSpec().getNfs() != null) {
            return NFS;
        }
        if (volume.getSpec().getPortworxVolume() != null) {
            return PortworxDeleter.PLUGIN_NAME;
        }
        return null;
    }

    /** FindRecyclablePluginBySpec: host-path and NFS recycle. */
    static String recyclablePluginBySpec(PersistentVolume volume) {
        String plugin = pluginBySpec(volume);
        return HOST_PATH.equals(plugin) || NFS.equals(plugin) ? plugin : null;
    }

    /** FindDeletablePluginBySpec / ByName: host-path and Portworx delete. */
    static String deletablePluginBySpec(PersistentVolume volume) {
        String plugin = pluginBySpec(volume);
        return isDeletable(plugin) ? plugin : null;
    }

    static boolean isDeletable(String pluginName) {
        return HOST_PATH.equals(pluginName) || PortworxDeleter.PLUGIN_NAME.equals(pluginName);
    }

    /** FindProvisionablePluginByName: only host-path provisions (when enabled, checked by newProvisioner). */
    static boolean isProvisionable(String pluginName) {
        return HOST_PATH.equals(pluginName);
    }

    // ---- recycling ----

    /**
     * The recycler pod of a volume (the plugins' Recycle before RecycleVolumeByWatchingPodUntilCompletion):
     * the plugin's template with activeDeadlineSeconds from the timeouts, the volume's source as its first
     * volume and the name {@code recycler-for-<pv>}. Throws upstream's error for a volume of no source.
     */
    Pod recyclerPod(String pluginName, PersistentVolume volume) {
        RecyclerConfig config = HOST_PATH.equals(pluginName) ? hostPath : nfs;
        Pod pod = DeepCopy.of(config.template());
        var first = pod.getSpec().getVolumes().get(0);
        var replaced = new VolumeBuilder().withName(first.getName()).build();
        if (HOST_PATH.equals(pluginName)) {
            if (volume.getSpec().getHostPath() == null) {
                throw new IllegalStateException("spec.PersistentVolume.Spec.HostPath is nil");
            }
            replaced.setHostPath(new HostPathVolumeSource(volume.getSpec().getHostPath().getPath(), null));
        } else {
            if (volume.getSpec().getNfs() == null) {
                throw new IllegalStateException("spec.PersistentVolumeSource.NFS is nil");
            }
            replaced.setNfs(new NFSVolumeSource(volume.getSpec().getNfs().getPath(), null, volume.getSpec().getNfs().getServer()));
        }
        pod.getSpec().setActiveDeadlineSeconds(calculateTimeoutForVolume(config.minimumTimeout(), config.timeoutIncrement(),
                volume));
        pod.getSpec().getVolumes().set(0, replaced);
        pod.getMetadata().setName("recycler-for-" + volume.getMetadata().getName());
        pod.getMetadata().setGenerateName(null);
        return pod;
    }

    /** util.CalculateTimeoutForVolume: the increment per whole Gi of capacity, at least the minimum. */
    static long calculateTimeoutForVolume(int minimumTimeout, int timeoutIncrement, PersistentVolume volume) {
        Quantity q = StorageHelpers.capacity(volume);
        long size = q == null ? 0 : StorageHelpers.amount(q).setScale(0, java.math.RoundingMode.CEILING).longValueExact();
        long timeout = (size / GI.longValue()) * timeoutIncrement;
        return Math.max(timeout, minimumTimeout);
    }

    /** volume.NewPersistentVolumeRecyclerPodTemplate: the default scrub pod. */
    static Pod defaultRecyclerPodTemplate() {
        return new PodBuilder().withNewMetadata().withGenerateName("pv-recycler-").withNamespace("default").endMetadata()
                .withNewSpec().withActiveDeadlineSeconds(60L).withRestartPolicy("Never")
                .withVolumes(new VolumeBuilder().withName("vol").build())
                .withContainers(new ContainerBuilder().withName("pv-recycler")
                        .withImage("registry.k8s.io/build-image/debian-base:bookworm-v1.0.6").withCommand("/bin/sh")
                        .withArgs("-c", "test -e /scrub && find /scrub -mindepth 1 -delete && test -z \"$(ls -A /scrub)\" || exit 1")
                        .withVolumeMounts(new VolumeMountBuilder().withName("vol").withMountPath("/scrub").build()).build())
                .endSpec().build();
    }

    /**
     * AttemptToLoadRecycler: the template from {@code path} (YAML or JSON), or the default one when the flag
     * is empty. Upstream exits the process on a bad file; here the controller fails to start with the error.
     */
    static Pod loadRecycler(String path, String kind) {
        if (path == null || path.isEmpty()) {
            return defaultRecyclerPodTemplate();
        }
        String text;
        try {
            text = Files.readString(Path.of(path));
        } catch (IOException e) {
            throw badTemplate(kind, path, "failed to read file path " + path + ": " + e);
        }
        if (text.isEmpty()) {
            throw badTemplate(kind, path, "file was empty: " + path);
        }
        Pod pod;
        try {
            pod = Json.api().unmarshal(text, Pod.class);
        } catch (RuntimeException e) {
            throw badTemplate(kind, path, "failed decoding file: " + e.getMessage());
        }
        if (pod == null || pod.getSpec() == null || pod.getSpec().getVolumes() == null || pod.getSpec().getVolumes().isEmpty()) {
            throw badTemplate(kind, path, "pod specification (" + path + "): does not contain any volume(s)");
        }
        if (pod.getMetadata() == null) {
            pod.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
        }
        return pod;
    }

    private static IllegalStateException badTemplate(String kind, String path, String error) {
        return new IllegalStateException("Could not create " + kind + " recycler pod from file " + path + ": " + error);
    }

    // ---- host-path deleter ----

    /**
     * hostPathDeleter.Delete: removes the directory on this machine, only when its path matches /tmp/.+
     * (anywhere in the path, as upstream's unanchored regexp). A missing directory is not an error.
     */
    static void deleteHostPath(PersistentVolume volume) throws IOException {
        if (volume.getSpec().getHostPath() == null) {
            throw new IllegalStateException("spec.PersistentVolumeSource.HostPath is nil");
        }
        String path = volume.getSpec().getHostPath().getPath();
        if (!HOST_PATH_DELETABLE.matcher(path).find()) {
            throw new IllegalStateException("host_path deleter only supports /tmp/.+ but received provided " + path);
        }
        removeAll(Path.of(path));
    }

    /** os.RemoveAll: the path and everything under it; symbolic links are removed, not followed. */
    private static void removeAll(Path path) throws IOException {
        if (!Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            List<Path> all = new ArrayList<>(walk.toList());
            all.sort(Comparator.reverseOrder());
            for (Path p : all) {
                Files.deleteIfExists(p);
            }
        }
    }

    // ---- host-path provisioner ----

    /**
     * NewProvisioner + hostPathProvisioner.Provision: a new directory {@code /tmp/hostpath_pv/<uuid>} (mode
     * 0750) and the volume describing it; where SELinux is enabled on this host the directory gets the
     * kubelet's shared container label ({@link HostSELinux}), and failing that the provisioning fails.
     */
    PersistentVolume provisionHostPath(String pvName, PersistentVolumeClaim claim, String reclaimPolicy) throws IOException {
        if (!hostPathProvisioningEnabled) {
            throw new ProvisionerException("provisioning in volume plugin \"" + HOST_PATH + "\" is disabled");
        }
        if ("Block".equals(claim.getSpec().getVolumeMode())) {
            throw new IllegalStateException(HOST_PATH + " does not support block volume provisioning");
        }
        Path full = provisionRoot.resolve(UUID.randomUUID().toString());
        Map<String, Quantity> capacity = new LinkedHashMap<>();
        Quantity requested = StorageHelpers.requestedStorage(claim);
        capacity.put("storage", requested == null ? new Quantity("0") : requested);
        List<String> modes = StorageHelpers.list(claim.getSpec().getAccessModes());
        PersistentVolume pv = new PersistentVolumeBuilder().withNewMetadata().withName(pvName)
                .withAnnotations(new LinkedHashMap<>(Map.of(ANN_CREATED_BY, "hostpath-dynamic-provisioner"))).endMetadata()
                .withNewSpec().withPersistentVolumeReclaimPolicy(reclaimPolicy)
                .withAccessModes(modes.isEmpty() ? List.of("ReadWriteOnce") : new ArrayList<>(modes))
                .withCapacity(capacity).withNewHostPath().withPath(full.toString()).endHostPath().endSpec().build();
        Files.createDirectories(full);
        try {
            Files.setPosixFilePermissions(full, PosixFilePermissions.fromString("rwxr-x---"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the directory keeps its default mode
        }
        if (selinux.enabled()) {
            try {
                selinux.setFileLabel(full, HostSELinux.KUBELET_CONTAINERS_SHARED_LABEL);
            } catch (IOException e) {
                throw new IOException("failed to set selinux label for \"" + full + "\": " + e.getMessage(), e);
            }
        }
        return pv;
    }

    /** NewProvisioner's failure ("Failed to create provisioner: ..."), told apart from Provision's. */
    static final class ProvisionerException extends IllegalStateException {
        ProvisionerException(String message) {
            super(message);
        }
    }
}
