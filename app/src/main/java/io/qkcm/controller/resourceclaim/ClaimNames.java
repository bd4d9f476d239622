package io.qkcm.controller.resourceclaim;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimConsumerReference;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.util.resource.ResourceClaim;

/**
 * k8s.io/dynamic-resource-allocation/resourceclaim's helpers and the controller's index functions:
 * which ResourceClaim a pod's claim refers to, whether a claim was made for the pod, reservations.
 */
final class ClaimNames {

    private ClaimNames() {
    }

    /** resourceclaim.Name's answer: a name (null: no claim is needed), whether ownership must be checked, or an error. */
    record Name(String name, boolean mustCheckOwner, String error, boolean claimNotFound) {
        boolean failed() {
            return error != null;
        }
    }

    /** resourceclaim.Name. */
    static Name name(Pod pod, PodResourceClaim podClaim) {
        if (podClaim.getResourceClaimName() != null) {
            return new Name(podClaim.getResourceClaimName(), false, null, false);
        }
        if (podClaim.getResourceClaimTemplateName() != null) {
            List<PodResourceClaimStatus> statuses = pod.getStatus() == null ? null : pod.getStatus().getResourceClaimStatuses();
            if (statuses != null) {
                for (PodResourceClaimStatus status : statuses) {
                    if (podClaim.getName().equals(status.getName())) {
                        return new Name(status.getResourceClaimName(), true, null, false);
                    }
                }
            }
            return new Name(null, false, String.format("pod \"%s/%s\": resource claim not created yet",
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName()), true);
        }
        return new Name(null, false, String.format("pod \"%s/%s\", spec.resourceClaim %s: unsupported workload API",
                pod.getMetadata().getNamespace(), pod.getMetadata().getName(), "\"" + podClaim.getName() + "\""), false);
    }

    /** resourceclaim.IsForPod: null when the claim was made for the pod, else the error. */
    static String isForPod(Pod pod, ResourceClaim claim) {
        if (!claim.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace())
                || !ControllerRefManager.isControlledBy(claim, pod)) {
            return String.format("ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)",
                    claim.getMetadata().getNamespace(), claim.getMetadata().getName(), pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName());
        }
        return null;
    }

    /** resourceclaim.IsReservedForPod. */
    static boolean isReservedForPod(Pod pod, ResourceClaim claim) {
        for (ResourceClaimConsumerReference ref : reservedFor(claim)) {
            if (pod.getMetadata().getUid().equals(ref.getUid())) {
                return true;
            }
        }
        return false;
    }

    static List<ResourceClaimConsumerReference> reservedFor(ResourceClaim claim) {
        if (claim.getStatus() == null || claim.getStatus().getReservedFor() == null) {
            return List.of();
        }
        return claim.getStatus().getReservedFor();
    }

    static boolean allocated(ResourceClaim claim) {
        return claim.getStatus() != null && claim.getStatus().getAllocation() != null;
    }

    /** The controller's podResourceClaimIndexFunc: the claims (namespace/name) a pod's claims resolve to. */
    static List<String> podResourceClaimKeys(Pod pod) {
        List<String> keys = new ArrayList<>();
        if (pod.getSpec() == null || pod.getSpec().getResourceClaims() == null) {
            return keys;
        }
        for (PodResourceClaim podClaim : pod.getSpec().getResourceClaims()) {
            Name n = name(pod, podClaim);
            if (!n.failed() && n.name() != null) {
                keys.add(pod.getMetadata().getNamespace() + "/" + n.name());
            }
        }
        return keys;
    }

    /** The controller's claimPodOwnerIndexFunc: the UIDs of the pods controlling a claim. */
    static List<String> podOwnerUids(ResourceClaim claim) {
        List<String> keys = new ArrayList<>();
        if (claim.getMetadata().getOwnerReferences() == null) {
            return keys;
        }
        for (OwnerReference owner : claim.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(owner.getController()) && "v1".equals(owner.getApiVersion()) && "Pod".equals(owner.getKind())) {
                keys.add(owner.getUid());
            }
        }
        return keys;
    }

    /** The controller's owningPod: name and UID of the pod controlling the claim, or null. */
    static OwnerReference owningPod(ResourceClaim claim) {
        if (claim.getMetadata().getOwnerReferences() == null) {
            return null;
        }
        for (OwnerReference owner : claim.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(owner.getController()) && "v1".equals(owner.getApiVersion()) && "Pod".equals(owner.getKind())) {
                return owner;
            }
        }
        return null;
    }

    /** podutil.IsPodTerminal. */
    static boolean isPodTerminal(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    /** The controller's isPodDone: terminal, or deleted before it was scheduled. */
    static boolean isPodDone(Pod pod) {
        return isPodTerminal(pod) || pod.getMetadata().getDeletionTimestamp() != null && !scheduled(pod);
    }

    static boolean scheduled(Pod pod) {
        return pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty();
    }
}
