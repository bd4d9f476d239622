package io.qkcm.controller.volume.common;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.informers.Indexes;

/**
 * Upstream's pkg/controller/volume/common: the pod informer's {@code pod-pvc-index}, the PVC keys
 * ({@code namespace/name}) a pod refers to, the claims its generic ephemeral volumes get
 * ({@code <pod>-<volume>}) included. The PVC protection and ephemeral volume controllers share it.
 */
public final class PodPVCIndex {

    public static final String POD_PVC_INDEX = "pod-pvc-index";

    private PodPVCIndex() {
    }

    /** component-helpers' ephemeral.VolumeClaimName: the claim of a pod's generic ephemeral volume. */
    public static String ephemeralVolumeClaimName(Pod pod, Volume volume) {
        return pod.getMetadata().getName() + "-" + volume.getName();
    }

    /** The index function: every claim the pod's volumes name, as {@code namespace/name}. */
    public static List<String> pvcKeys(Pod pod) {
        List<String> keys = new ArrayList<>();
        if (pod.getSpec() == null || pod.getSpec().getVolumes() == null) {
            return keys;
        }
        for (Volume volume : pod.getSpec().getVolumes()) {
            String claimName = "";
            if (volume.getPersistentVolumeClaim() != null) {
                claimName = volume.getPersistentVolumeClaim().getClaimName();
            } else if (volume.getEphemeral() != null) {
                claimName = ephemeralVolumeClaimName(pod, volume);
            }
            if (claimName != null && !claimName.isEmpty()) {
                keys.add(pod.getMetadata().getNamespace() + "/" + claimName);
            }
        }
        return keys;
    }

    /** Upstream's AddPodPVCIndexerIfNotPresent on the shared pod informer. */
    public static void addIfNotPresent(SharedIndexInformer<Pod> pods) {
        synchronized (pods) {
            if (pods.getIndexer().getIndexers().containsKey(POD_PVC_INDEX)) {
                return;
            }
            pods.addIndexers(Map.of(POD_PVC_INDEX, PodPVCIndex::pvcKeys));
        }
    }

    /** The cached pods that refer to the claim {@code namespace/name}. */
    public static List<Pod> podsUsing(SharedIndexInformer<Pod> pods, String namespace, String name) {
        return Indexes.byIndex(pods, POD_PVC_INDEX, namespace + "/" + name);
    }
}
