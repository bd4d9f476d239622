package io.qkcm.controller.resourceclaim;

import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * resourceclaim-controller's sync of a {@code claim:} key (upstream's syncClaim): drop reservations of pods
 * that are gone, replaced or done; with none left, the built-in finalizer and allocation go; a claim
 * generated for a pod that is done (or replaced) is deleted.
 */
final class ClaimSync {

    private static final Logger log = Logger.getLogger(ClaimSync.class);

    private final ControllerContext context;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<ResourceClaim> claims;
    private final UIDCache deletedObjects;

    ClaimSync(ControllerContext context, SharedIndexInformer<Pod> pods, SharedIndexInformer<ResourceClaim> claims,
            UIDCache deletedObjects) {
        this.context = context;
        this.pods = pods;
        this.claims = claims;
        this.deletedObjects = deletedObjects;
    }

    /** Upstream's syncClaim of the claim {@code key} ({@code namespace/name}). */
    void sync(String key) throws Exception {
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        ResourceClaim claim = claims.getStore().getByKey(key);
        if (claim == null) {
            log.tracef("nothing to do for claim %s, it is gone", key);
            return;
        }
        String namespace = k.namespace();
        List<ResourceClaimConsumerReference> reservedFor = ClaimNames.reservedFor(claim);
        List<ResourceClaimConsumerReference> valid = new ArrayList<>();
        for (ResourceClaimConsumerReference ref : reservedFor) {
            if ((ref.getApiGroup() == null || ref.getApiGroup().isEmpty()) && "pods".equals(ref.getResource())) {
                boolean keep = true;
                if (deletedObjects.has(ref.getUid())) {
                    keep = false;
                } else {
                    Pod pod = pods.getStore().getByKey(namespace + "/" + ref.getName());
                    if (pod == null) {
                        // maybe not cached yet: ask the API server
                        Pod live = context.client().pods().inNamespace(namespace).withName(ref.getName()).get();
                        if (live == null || !live.getMetadata().getUid().equals(ref.getUid())) {
                            log.tracef("remove reservation because pod is gone or got replaced: claim %s", key);
                            keep = false;
                        }
                    } else if (!pod.getMetadata().getUid().equals(ref.getUid())) {
                        log.tracef("remove reservation because pod got replaced with new instance: claim %s", key);
                        keep = false;
                    } else if (ClaimNames.isPodDone(pod)) {
                        log.tracef("remove reservation because pod will not run anymore: claim %s", key);
                        keep = false;
                    }
                }
                if (keep) {
                    valid.add(ref);
                }
                continue;
            }
            // an entry of another controller: not ours to judge
            throw new IllegalStateException("unsupported ReservedFor entry: " + ref);
        }
        boolean builtinFinalizer = claim.getMetadata().getFinalizers() != null
                && claim.getMetadata().getFinalizers().contains(ResourceClaim.FINALIZER);
        log.tracef("claim %s reserved for counts: current %d, updated %d, builtin controller %b", key, reservedFor.size(),
                valid.size(), builtinFinalizer);
        if (valid.size() < reservedFor.size()) {
            ResourceClaim copy = DeepCopy.of(claim);
            copy.getStatus().setReservedFor(valid);
            if (valid.isEmpty() && builtinFinalizer) {
                copy.getStatus().setAllocation(null);
            }
            ResourceClaim updated = context.client().resources(ResourceClaim.class).inNamespace(namespace).resource(copy)
                    .updateStatus();
            boolean stillFinalized = updated.getMetadata().getFinalizers() != null
                    && updated.getMetadata().getFinalizers().contains(ResourceClaim.FINALIZER);
            if (stillFinalized && !ClaimNames.allocated(updated)) {
                removeFinalizer(updated);
            }
        } else if (builtinFinalizer && claim.getMetadata().getDeletionTimestamp() != null && valid.isEmpty()) {
            ResourceClaim copy = DeepCopy.of(claim);
            if (ClaimNames.allocated(copy)) {
                copy.getStatus().setAllocation(null);
                copy = context.client().resources(ResourceClaim.class).inNamespace(namespace).resource(copy).updateStatus();
            }
            removeFinalizer(copy);
        }
        if (valid.isEmpty()) {
            OwnerReference owner = ClaimNames.owningPod(claim);
            if (owner == null) {
                log.tracef("claim %s not generated for a pod", key);
                return;
            }
            Pod pod = pods.getStore().getByKey(namespace + "/" + owner.getName());
            if (pod == null) {
                log.tracef("pod for claim %s not found: %s", key, owner.getName());
                return;
            }
            if (!pod.getMetadata().getUid().equals(owner.getUid()) || ClaimNames.isPodDone(pod)) {
                log.debugf("deleting unused generated claim %s (pod %s)", key, owner.getName());
                try {
                    context.client().resources(ResourceClaim.class).inNamespace(namespace).withName(claim.getMetadata().getName())
                            .delete();
                } catch (RuntimeException e) {
                    throw new IllegalStateException("delete claim " + key + ": " + e.getMessage(), e);
                }
            } else {
                log.tracef("wrong pod content, not deleting claim %s", key);
            }
        }
    }

    private void removeFinalizer(ResourceClaim claim) {
        ResourceClaim copy = DeepCopy.of(claim);
        List<String> finalizers = new ArrayList<>(copy.getMetadata().getFinalizers());
        finalizers.remove(ResourceClaim.FINALIZER); // the first occurrence, as upstream's slices.Delete
        copy.getMetadata().setFinalizers(finalizers);
        context.client().resources(ResourceClaim.class).inNamespace(copy.getMetadata().getNamespace()).resource(copy).update();
    }
}
