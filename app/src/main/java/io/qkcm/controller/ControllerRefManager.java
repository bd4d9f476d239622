package io.qkcm.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.function.Supplier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Upstream's controller_ref_manager.go: a controller claims the objects it should own. Objects it
 * controls that no longer match are released (owner reference removed); matching orphans are adopted
 * (controller owner reference added) after {@link CanAdopt} proved, once per manager, that the
 * controller is not being deleted (typically {@link #recheckDeletionTimestamp} on an uncached GET).
 * Works for any dependent kind: {@link #forPods} and {@link #forReplicaSets} are the usual ones.
 *
 * @param <T> the dependent type
 */
public final class ControllerRefManager<T extends HasMetadata> {

    private static final Logger LOG = Logger.getLogger(ControllerRefManager.class);
    private static final ObjectMapper JSON = io.qkcm.runtime.Json.mapper();

    /** Applies a strategic-merge patch to a dependent. */
    @FunctionalInterface
    public interface Patcher<T> {
        void patch(T object, String strategicMergePatch);
    }

    /** Throws when the controller must not adopt (e.g. it is being deleted). */
    @FunctionalInterface
    public interface CanAdopt {
        void check() throws Exception;
    }

    private final HasMetadata controller;
    private final LabelSelectors.Selector selector;
    private final String apiVersion;
    private final String kind;
    private final String dependentKind;
    private final CanAdopt canAdoptFunc;
    private final Patcher<T> patcher;
    private final List<String> finalizers;
    private boolean canAdoptChecked;
    private Exception canAdoptErr;

    public ControllerRefManager(HasMetadata controller, LabelSelectors.Selector selector, String apiVersion,
            String kind, String dependentKind, CanAdopt canAdopt, Patcher<T> patcher, List<String> finalizers) {
        this.controller = controller;
        this.selector = selector;
        this.apiVersion = apiVersion;
        this.kind = kind;
        this.dependentKind = dependentKind;
        this.canAdoptFunc = canAdopt;
        this.patcher = patcher;
        this.finalizers = finalizers == null ? List.of() : List.copyOf(finalizers);
    }

    /** Upstream's PodControllerRefManager; {@code finalizers} are added on adoption, removed on release. */
    public static ControllerRefManager<Pod> forPods(PodControl podControl, HasMetadata controller,
            LabelSelectors.Selector selector, String apiVersion, String kind, CanAdopt canAdopt, String... finalizers) {
        return new ControllerRefManager<>(controller, selector, apiVersion, kind, "Pod", canAdopt,
                (pod, patch) -> podControl.patchPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), patch),
                List.of(finalizers));
    }

    /** Upstream's ReplicaSetControllerRefManager (a Deployment claiming its ReplicaSets). */
    public static ControllerRefManager<ReplicaSet> forReplicaSets(KubernetesClient client, HasMetadata controller,
            LabelSelectors.Selector selector, String apiVersion, String kind, CanAdopt canAdopt) {
        return new ControllerRefManager<>(controller, selector, apiVersion, kind, "ReplicaSet", canAdopt,
                (rs, patch) -> client.apps().replicaSets().inNamespace(rs.getMetadata().getNamespace())
                        .withName(rs.getMetadata().getName()).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch),
                List.of());
    }

    /** Upstream's ControllerRevisionControllerRefManager (a DaemonSet or StatefulSet claiming its revisions). */
    public static ControllerRefManager<io.fabric8.kubernetes.api.model.apps.ControllerRevision> forControllerRevisions(
            KubernetesClient client, HasMetadata controller, LabelSelectors.Selector selector, String apiVersion,
            String kind, CanAdopt canAdopt) {
        return new ControllerRefManager<>(controller, selector, apiVersion, kind, "ControllerRevision", canAdopt,
                (cr, patch) -> client.apps().controllerRevisions().inNamespace(cr.getMetadata().getNamespace())
                        .withName(cr.getMetadata().getName()).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch),
                List.of());
    }

    /** The owner reference with {@code controller: true}, or null (metav1.GetControllerOf). */
    public static OwnerReference controllerOf(HasMetadata obj) {
        if (obj.getMetadata() == null || obj.getMetadata().getOwnerReferences() == null) {
            return null;
        }
        // indexed: called for every cached pod on every sync, and C1 (bin/qkcm's JIT) allocates each iterator
        List<OwnerReference> refs = obj.getMetadata().getOwnerReferences();
        for (int i = 0, n = refs.size(); i < n; i++) {
            OwnerReference ref = refs.get(i);
            if (Boolean.TRUE.equals(ref.getController())) {
                return ref;
            }
        }
        return null;
    }

    /** Whether {@code obj} is controlled by {@code owner} (same UID). */
    public static boolean isControlledBy(HasMetadata obj, HasMetadata owner) {
        OwnerReference ref = controllerOf(obj);
        return ref != null && ref.getUid() != null && ref.getUid().equals(owner.getMetadata().getUid());
    }

    /** metav1.NewControllerRef: controller and blockOwnerDeletion set. */
    public static OwnerReference newControllerRef(HasMetadata owner, String apiVersion, String kind) {
        return new OwnerReferenceBuilder().withApiVersion(apiVersion).withKind(kind)
                .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).build();
    }

    /**
     * Upstream's canAdoptFunc of the workload controllers: {@link #recheckDeletionTimestamp} on an
     * uncached GET of {@code owner} ({@code uncachedGet}, null when not found) that also proves it is
     * the same object (same UID), not a new one under the same name.
     */
    public static CanAdopt recheckDeletionTimestamp(HasMetadata owner, String kind,
            Supplier<? extends HasMetadata> uncachedGet) {
        String ns = owner.getMetadata().getNamespace();
        String name = owner.getMetadata().getName();
        String uid = owner.getMetadata().getUid();
        return recheckDeletionTimestamp(() -> {
            HasMetadata fresh = uncachedGet.get();
            if (fresh == null) {
                throw new KubernetesClientException(kind + " " + ns + "/" + name + " not found", 404, null);
            }
            if (!Objects.equals(fresh.getMetadata().getUid(), uid)) {
                throw new IllegalStateException("original " + kind + " " + ns + "/" + name + " is gone: got uid "
                        + fresh.getMetadata().getUid() + ", wanted " + uid);
            }
            return fresh;
        });
    }

    /**
     * Upstream's RecheckDeletionTimestamp: {@code fresh} reads the controller from the API server
     * (uncached; it should throw if the UID no longer matches); adoption is refused if it is being
     * deleted.
     */
    public static CanAdopt recheckDeletionTimestamp(Supplier<? extends HasMetadata> fresh) {
        return () -> {
            HasMetadata obj;
            try {
                obj = fresh.get();
            } catch (RuntimeException e) {
                throw new IllegalStateException("can't recheck DeletionTimestamp: " + ApiErrors.message(e), e);
            }
            if (obj.getMetadata().getDeletionTimestamp() != null) {
                throw new IllegalStateException(obj.getMetadata().getNamespace() + "/" + obj.getMetadata().getName()
                        + " has just been deleted at " + obj.getMetadata().getDeletionTimestamp());
            }
        };
    }

    private synchronized void canAdopt() throws Exception {
        if (!canAdoptChecked) {
            canAdoptChecked = true;
            if (canAdoptFunc != null) {
                try {
                    canAdoptFunc.check();
                } catch (Exception e) {
                    canAdoptErr = e;
                }
            }
        }
        if (canAdoptErr != null) {
            throw canAdoptErr;
        }
    }

    /** Thrown by {@link #claim} after all objects were tried: the aggregate of the failures. */
    public static final class ClaimException extends Exception {
        private final List<Exception> errors;

        ClaimException(List<Exception> errors) {
            super(aggregateMessage(errors), errors.get(0));
            this.errors = List.copyOf(errors);
        }

        public List<Exception> errors() {
            return errors;
        }

        private static String aggregateMessage(List<Exception> errors) {
            if (errors.size() == 1) {
                return ApiErrors.message(errors.get(0));
            }
            List<String> msgs = new ArrayList<>();
            errors.forEach(e -> msgs.add(ApiErrors.message(e)));
            return "[" + String.join(", ", msgs) + "]";
        }
    }

    /**
     * Claims {@code objects}: returns those the controller owns after adoption/release, in order.
     * Objects matching the selector and every filter are the controller's.
     */
    @SafeVarargs
    public final List<T> claim(List<T> objects, Predicate<T>... filters) throws ClaimException {
        Predicate<T> match = o -> {
            if (!selector.matches(o.getMetadata().getLabels())) {
                return false;
            }
            for (Predicate<T> f : filters) {
                if (!f.test(o)) {
                    return false;
                }
            }
            return true;
        };
        List<T> claimed = new ArrayList<>();
        List<Exception> errors = new ArrayList<>();
        for (T o : objects) {
            try {
                if (claimObject(o, match)) {
                    claimed.add(o);
                }
            } catch (Exception e) {
                errors.add(e);
            }
        }
        if (!errors.isEmpty()) {
            throw new ClaimException(errors);
        }
        return claimed;
    }

    /** Upstream's ClaimObject: true if the controller owns {@code obj} after this call. */
    public boolean claimObject(T obj, Predicate<T> match) throws Exception {
        OwnerReference ref = controllerOf(obj);
        if (ref != null) {
            if (!controller.getMetadata().getUid().equals(ref.getUid())) {
                return false; // owned by someone else
            }
            if (match.test(obj)) {
                return true;
            }
            if (controller.getMetadata().getDeletionTimestamp() != null) {
                return false; // a controller being deleted releases nothing
            }
            try {
                release(obj);
            } catch (RuntimeException e) {
                if (ApiErrors.isNotFound(e)) {
                    return false;
                }
                throw e;
            }
            return false;
        }
        if (controller.getMetadata().getDeletionTimestamp() != null || !match.test(obj)) {
            return false;
        }
        if (obj.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        String ns = controller.getMetadata().getNamespace();
        if (ns != null && !ns.isEmpty() && !ns.equals(obj.getMetadata().getNamespace())) {
            return false;
        }
        try {
            adopt(obj);
        } catch (RuntimeException e) {
            if (ApiErrors.isNotFound(e)) {
                return false;
            }
            throw e;
        }
        return true;
    }

    /** Adds the controller reference, after the (memoized) adoption check. */
    public void adopt(T obj) throws Exception {
        try {
            canAdopt();
        } catch (Exception e) {
            throw new IllegalStateException("can't adopt " + dependentKind + " " + obj.getMetadata().getNamespace() + "/"
                    + obj.getMetadata().getName() + " (" + obj.getMetadata().getUid() + "): " + e.getMessage(), e);
        }
        patcher.patch(obj, ownerRefControllerPatch(controller, apiVersion, kind, obj.getMetadata().getUid(), finalizers));
    }

    /** Removes the controller's owner reference; NotFound and Invalid (already gone/changed) are ignored. */
    public void release(T obj) {
        LOG.debugf("patching %s %s/%s to remove its controllerRef to %s/%s", dependentKind,
                obj.getMetadata().getNamespace(), obj.getMetadata().getName(), kind, controller.getMetadata().getName());
        String patch = deleteOwnerRefStrategicMergePatch(obj.getMetadata().getUid(),
                List.of(controller.getMetadata().getUid()), finalizers);
        try {
            patcher.patch(obj, patch);
        } catch (RuntimeException e) {
            if (ApiErrors.isNotFound(e) || ApiErrors.isInvalid(e)) {
                return;
            }
            throw e;
        }
    }

    /** The adoption patch: the controller reference, guarded by the dependent's UID. */
    public static String ownerRefControllerPatch(HasMetadata controller, String apiVersion, String kind,
            String dependentUid, List<String> finalizers) {
        Map<String, Object> ref = new LinkedHashMap<>();
        ref.put("apiVersion", apiVersion);
        ref.put("kind", kind);
        ref.put("name", controller.getMetadata().getName());
        ref.put("uid", controller.getMetadata().getUid());
        ref.put("controller", true);
        ref.put("blockOwnerDeletion", true);
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("ownerReferences", List.of(ref));
        meta.put("uid", dependentUid);
        if (finalizers != null && !finalizers.isEmpty()) {
            meta.put("finalizers", finalizers);
        }
        return toJson(Map.of("metadata", meta));
    }

    /** The release patch: delete the owner references with these UIDs (and the finalizers). */
    public static String deleteOwnerRefStrategicMergePatch(String dependentUid, List<String> ownerUids,
            List<String> finalizers) {
        List<Map<String, String>> refs = new ArrayList<>();
        for (String uid : ownerUids) {
            Map<String, String> r = new LinkedHashMap<>();
            r.put("$patch", "delete");
            r.put("uid", uid);
            refs.add(r);
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("uid", dependentUid);
        meta.put("ownerReferences", refs);
        if (finalizers != null && !finalizers.isEmpty()) {
            meta.put("$deleteFromPrimitiveList/finalizers", finalizers);
        }
        return toJson(Map.of("metadata", meta));
    }

    private static String toJson(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
