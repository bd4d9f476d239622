package io.qkcm.controller.volume.persistentvolume;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.DeepCopy;

/**
 * The PV binder's share of component-helpers/storage/volume (annotations, FindMatchingVolume,
 * CheckVolumeModeMismatches, CheckAccessModes, the claim's and volume's class), of pkg/volume/util
 * (GetDefaultClass, IsPodTerminated, ContainsAllAccessModes) and of the core v1 helper's access-mode
 * strings.
 */
final class StorageHelpers {

    static final String ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed";
    static final String ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller";
    static final String ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";
    static final String NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner";
    static final String ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by";
    static final String ANN_MIGRATED_TO = "pv.kubernetes.io/migrated-to";
    static final String ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner";
    static final String ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner";
    static final String PV_DELETION_PROTECTION_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";
    static final String PV_DELETION_IN_TREE_PROTECTION_FINALIZER = "kubernetes.io/pv-controller";
    static final String BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class";
    static final String ANN_PRE_RESIZE_CAPACITY = "volume.alpha.kubernetes.io/pre-resize-capacity";
    static final String IS_DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
    static final String BETA_IS_DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class";

    static final String FILESYSTEM = "Filesystem";

    private StorageHelpers() {
    }

    static Map<String, String> annotations(HasMetadata o) {
        Map<String, String> a = o.getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    static boolean hasAnnotation(HasMetadata o, String key) {
        return annotations(o).containsKey(key);
    }

    static void setAnnotation(HasMetadata o, String key, String value) {
        if (o.getMetadata().getAnnotations() == null) {
            o.getMetadata().setAnnotations(new java.util.LinkedHashMap<>());
        }
        o.getMetadata().getAnnotations().put(key, value);
    }

    static String claimKey(PersistentVolumeClaim claim) {
        return claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
    }

    static String claimRefKey(ObjectReference ref) {
        return ref.getNamespace() + "/" + ref.getName();
    }

    static String volumePhase(PersistentVolume volume) {
        return volume.getStatus() == null || volume.getStatus().getPhase() == null ? "" : volume.getStatus().getPhase();
    }

    static String claimPhase(PersistentVolumeClaim claim) {
        return claim.getStatus() == null || claim.getStatus().getPhase() == null ? "" : claim.getStatus().getPhase();
    }

    static String volumeName(PersistentVolumeClaim claim) {
        String name = claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
        return name == null ? "" : name;
    }

    static String uid(HasMetadata o) {
        return o.getMetadata().getUid() == null ? "" : o.getMetadata().getUid();
    }

    static String refUid(ObjectReference ref) {
        return ref.getUid() == null ? "" : ref.getUid();
    }

    static String reclaimPolicy(PersistentVolume volume) {
        String p = volume.getSpec().getPersistentVolumeReclaimPolicy();
        return p == null ? "" : p;
    }

    /** IsDelayBindingProvisioning: the scheduler has chosen a node for the claim. */
    static boolean isDelayBindingProvisioning(PersistentVolumeClaim claim) {
        return hasAnnotation(claim, ANN_SELECTED_NODE);
    }

    /** PersistentVolumeClaimHasClass. */
    static boolean claimHasClass(PersistentVolumeClaim claim) {
        return hasAnnotation(claim, BETA_STORAGE_CLASS_ANNOTATION) || claim.getSpec().getStorageClassName() != null;
    }

    /** GetPersistentVolumeClaimClass: the beta annotation wins over the field. */
    static String claimClass(PersistentVolumeClaim claim) {
        String beta = annotations(claim).get(BETA_STORAGE_CLASS_ANNOTATION);
        if (beta != null) {
            return beta;
        }
        String name = claim.getSpec().getStorageClassName();
        return name == null ? "" : name;
    }

    /** GetPersistentVolumeClass. */
    static String volumeClass(PersistentVolume volume) {
        String beta = annotations(volume).get(BETA_STORAGE_CLASS_ANNOTATION);
        if (beta != null) {
            return beta;
        }
        String name = volume.getSpec().getStorageClassName();
        return name == null ? "" : name;
    }

    /** IsVolumeBoundToClaim: pre-bound or bound to this claim (the UID, when the reference has one). */
    static boolean isVolumeBoundToClaim(PersistentVolume volume, PersistentVolumeClaim claim) {
        ObjectReference ref = volume.getSpec().getClaimRef();
        if (ref == null) {
            return false;
        }
        if (!Objects.equals(claim.getMetadata().getName(), ref.getName())
                || !Objects.equals(claim.getMetadata().getNamespace(), ref.getNamespace())) {
            return false;
        }
        return refUid(ref).isEmpty() || uid(claim).equals(refUid(ref));
    }

    /** client-go's reference.GetReference of a claim. */
    static ObjectReference claimReference(PersistentVolumeClaim claim) {
        ObjectReference ref = new ObjectReference();
        ref.setKind("PersistentVolumeClaim");
        ref.setApiVersion("v1");
        ref.setNamespace(claim.getMetadata().getNamespace());
        ref.setName(claim.getMetadata().getName());
        ref.setUid(claim.getMetadata().getUid());
        ref.setResourceVersion(claim.getMetadata().getResourceVersion());
        return ref;
    }

    /** GetBindVolumeToClaim: a copy of the volume bound to the claim, or null when nothing changes. */
    static PersistentVolume bindVolumeToClaim(PersistentVolume volume, PersistentVolumeClaim claim) {
        boolean dirty = false;
        boolean shouldSetBoundByController = !isVolumeBoundToClaim(volume, claim);
        PersistentVolume clone = DeepCopy.of(volume);
        ObjectReference ref = volume.getSpec().getClaimRef();
        if (ref == null || !Objects.equals(ref.getName(), claim.getMetadata().getName())
                || !Objects.equals(ref.getNamespace(), claim.getMetadata().getNamespace())
                || !refUid(ref).equals(uid(claim))) {
            clone.getSpec().setClaimRef(claimReference(claim));
            dirty = true;
        }
        if (shouldSetBoundByController && !hasAnnotation(clone, ANN_BOUND_BY_CONTROLLER)) {
            setAnnotation(clone, ANN_BOUND_BY_CONTROLLER, "yes");
            dirty = true;
        }
        return dirty ? clone : null;
    }

    /** A quantity's value; a missing one is zero. */
    static BigDecimal amount(Quantity q) {
        return q == null ? BigDecimal.ZERO : Quantity.getAmountInBytes(q);
    }

    static Quantity requestedStorage(PersistentVolumeClaim claim) {
        var resources = claim.getSpec().getResources();
        if (resources == null || resources.getRequests() == null) {
            return null;
        }
        return resources.getRequests().get("storage");
    }

    static Quantity capacity(PersistentVolume volume) {
        return volume.getSpec().getCapacity() == null ? null : volume.getSpec().getCapacity().get("storage");
    }

    static String nonNull(String s) {
        return s == null ? "" : s;
    }

    /**
     * FindMatchingVolume in the PV controller's path (no node, no excluded volumes): the volume
     * pre-bound to the claim if any, otherwise the smallest Available one that satisfies it; with
     * {@code delayBinding} only a pre-bound one.
     */
    static PersistentVolume findMatchingVolume(PersistentVolumeClaim claim, List<PersistentVolume> volumes,
            boolean delayBinding, boolean vacEnabled) throws BindingException {
        String claimVAC = nonNull(claim.getSpec().getVolumeAttributesClassName());
        if (!vacEnabled && !claimVAC.isEmpty()) {
            throw new BindingException("unsupported volumeAttributesClassName is set on claim " + claimKey(claim)
                    + " when the feature-gate VolumeAttributesClass is disabled");
        }
        PersistentVolume smallest = null;
        BigDecimal smallestQty = null;
        BigDecimal requested = amount(requestedStorage(claim));
        String requestedClass = claimClass(claim);
        LabelSelectors.Selector selector = null;
        if (claim.getSpec().getSelector() != null) {
            try {
                selector = LabelSelectors.fromLabelSelector(claim.getSpec().getSelector());
            } catch (IllegalArgumentException e) {
                throw new BindingException("error creating internal label selector for claim: " + claimKey(claim) + ": "
                        + e.getMessage());
            }
        }
        for (PersistentVolume volume : volumes) {
            if (volume.getSpec().getClaimRef() != null && !isVolumeBoundToClaim(volume, claim)) {
                continue;
            }
            BigDecimal volumeQty = amount(capacity(volume));
            if (volumeQty.compareTo(requested) < 0) {
                continue;
            }
            if (checkVolumeModeMismatches(claim, volume)) {
                continue;
            }
            String volumeVAC = nonNull(volume.getSpec().getVolumeAttributesClassName());
            if (vacEnabled && !claimVAC.equals(volumeVAC)) {
                continue;
            }
            if (!vacEnabled && !volumeVAC.isEmpty()) {
                continue;
            }
            if (volume.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            if (isVolumeBoundToClaim(volume, claim)) {
                return volume;
            }
            if (delayBinding) {
                // the scheduler binds unbound volumes of a WaitForFirstConsumer claim
                continue;
            }
            if (!"Available".equals(volumePhase(volume))) {
                continue;
            }
            if (selector != null && !selector.matches(volume.getMetadata().getLabels() == null ? Map.of()
                    : volume.getMetadata().getLabels())) {
                continue;
            }
            if (!volumeClass(volume).equals(requestedClass)) {
                continue;
            }
            if (smallest == null || smallestQty.compareTo(volumeQty) > 0) {
                smallest = volume;
                smallestQty = volumeQty;
            }
        }
        return smallest;
    }

    /** CheckVolumeModeMismatches: an unset mode is Filesystem on both sides. */
    static boolean checkVolumeModeMismatches(PersistentVolumeClaim claim, PersistentVolume volume) {
        String requested = claim.getSpec().getVolumeMode() == null ? FILESYSTEM : claim.getSpec().getVolumeMode();
        String mode = volume.getSpec().getVolumeMode() == null ? FILESYSTEM : volume.getSpec().getVolumeMode();
        return !requested.equals(mode);
    }

    /** CheckAccessModes: the volume has every mode the claim asks for. */
    static boolean checkAccessModes(PersistentVolumeClaim claim, PersistentVolume volume) {
        List<String> volumeModes = list(volume.getSpec().getAccessModes());
        for (String mode : list(claim.getSpec().getAccessModes())) {
            if (!volumeModes.contains(mode)) {
                return false;
            }
        }
        return true;
    }

    static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : l;
    }

    private static final List<String[]> MODE_ABBREVIATIONS = List.of(
            new String[] { "ReadWriteOnce", "RWO" }, new String[] { "ReadOnlyMany", "ROX" },
            new String[] { "ReadWriteMany", "RWX" }, new String[] { "ReadWriteOncePod", "RWOP" });

    /** The core v1 helper's GetAccessModesAsString: known modes, deduplicated, in a fixed order. */
    static String accessModesAsString(List<String> modes) {
        List<String> out = new ArrayList<>();
        for (String[] m : MODE_ABBREVIATIONS) {
            if (list(modes).contains(m[0])) {
                out.add(m[1]);
            }
        }
        return String.join(",", out);
    }

    /** GetAccessModesFromString. */
    static List<String> accessModesFromString(String modes) {
        List<String> out = new ArrayList<>();
        for (String s : modes.split(",", -1)) {
            String t = s.trim();
            for (String[] m : MODE_ABBREVIATIONS) {
                if (m[1].equals(t)) {
                    out.add(m[0]);
                }
            }
        }
        return out;
    }

    /** pkg/volume/util's ContainsAllAccessModes. */
    static boolean containsAllAccessModes(List<String> indexed, List<String> requested) {
        Set<String> have = new LinkedHashSet<>(indexed);
        return have.containsAll(list(requested));
    }

    /** GetDefaultClass: the newest default class, the first name on a tie; null when none. */
    static StorageClass defaultClass(List<StorageClass> classes) {
        return classes.stream().filter(StorageHelpers::isDefaultAnnotation)
                .min(Comparator.<StorageClass, java.time.Instant> comparing(c -> creation(c), Comparator.reverseOrder())
                        .thenComparing(c -> c.getMetadata().getName()))
                .orElse(null);
    }

    private static java.time.Instant creation(HasMetadata o) {
        String ts = o.getMetadata().getCreationTimestamp();
        return ts == null ? java.time.Instant.EPOCH : java.time.Instant.parse(ts);
    }

    static boolean isDefaultAnnotation(HasMetadata o) {
        return "true".equals(annotations(o).get(IS_DEFAULT_STORAGE_CLASS_ANNOTATION))
                || "true".equals(annotations(o).get(BETA_IS_DEFAULT_STORAGE_CLASS_ANNOTATION));
    }

    /** pkg/volume/util's IsPodTerminated. */
    static boolean isPodTerminated(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return true;
        }
        if (pod.getMetadata().getDeletionTimestamp() == null) {
            return false;
        }
        if (pod.getStatus() == null) {
            return true;
        }
        return notRunning(pod.getStatus().getInitContainerStatuses()) && notRunning(pod.getStatus().getContainerStatuses())
                && notRunning(pod.getStatus().getEphemeralContainerStatuses());
    }

    private static boolean notRunning(List<ContainerStatus> statuses) {
        for (ContainerStatus status : list(statuses)) {
            if (status.getState() == null || (status.getState().getTerminated() == null
                    && status.getState().getWaiting() == null)) {
                return false;
            }
        }
        return true;
    }

    /** A failure to find a volume for a claim (upstream's error from FindMatchingVolume). */
    static final class BindingException extends Exception {
        private static final long serialVersionUID = 1L;

        BindingException(String message) {
            super(message);
        }
    }
}
