package io.qkcm.controller.resourceclaim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequest;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.controller.resourceclaim.api.ResourceClaimTemplate;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.clients.ClientGoCreates;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * resourceclaim-controller (upstream pkg/controller/resourceclaim), its pod half: for each pod claim
 * with a {@code resourceClaimTemplateName}, a ResourceClaim from the template (generateName
 * {@code <pod>-<claim>-}, controlled by the pod, annotated {@code resource.kubernetes.io/pod-claim-name}),
 * recorded in the pod's {@code status.resourceClaimStatuses} (server-side apply, field manager
 * ResourceClaimController); for a scheduled pod, an allocated claim is reserved for it.
 *
 * <p>One queue, {@code resource_claim}, with 50 workers, as upstream's: pod keys ({@code namespace/name},
 * upstream's {@code pod:} keys) and claim keys ({@code claim:namespace/name}, synced by {@link ClaimSync}:
 * reservedFor clean-up, the built-in finalizer, deletion of generated claims whose pod is done). A claim
 * key is no pod the cache holds, so JOSDK syncs it as a tombstone (a pod named after the key, in the
 * namespace {@code claim:<namespace>}, which no namespace name can be); adds during its sync are kept by
 * the framework's TombstoneRedelivery. Upstream's handlers do the queueing ({@code enqueuePod},
 * {@code enqueueResourceClaim}); JOSDK's own pod adds pass only when the pod needs work (they cover the pods
 * cached before the Operator started), pod updates never; {@link #onStart} queues every cached claim, as
 * the replay of the claim informer's items to upstream's handler does.
 *
 * <p>A generated name is chosen by the API server, so a create is never re-sent ({@link ClientGoCreates});
 * a create whose answer was lost is resolved by a live list before the pod's next create
 * ({@link CreatedClaims}).
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ResourceClaimController extends KeyReconciler<Pod> {

    public static final String NAME = "resourceclaim-controller";
    public static final String QUEUE = "resource_claim";
    /** Upstream's prefix of claim keys in the one queue. */
    static final String CLAIM_KEY_PREFIX = "claim:";
    public static final String EVENT_SOURCE = "resource_claim";
    public static final String POD_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name";
    public static final String FIELD_MANAGER = "ResourceClaimController";
    static final String POD_RESOURCE_CLAIM_INDEX = "pod-resource-claim-index";
    static final String CLAIM_POD_OWNER_INDEX = "claim-pod-owner-index";
    static final int MAX_UID_CACHE_ENTRIES = 500;

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<ResourceClaim> claims;
    private final SharedIndexInformer<ResourceClaimTemplate> templates;
    private final EventRecorder recorder;
    private final ClaimSync claimSync;
    private final ResourceClaimMetrics metrics;
    private final UIDCache deletedObjects = new UIDCache(MAX_UID_CACHE_ENTRIES);
    private final CreatedClaims created = new CreatedClaims(System::nanoTime);
    private final ClientGoCreates creations;

    /** Upstream's resourceclaim.Features: the gates that refuse templates using what they guard. */
    public record Features(boolean adminAccess, boolean prioritizedList) {
        public static Features from(io.qkcm.runtime.options.FeatureGates gates) {
            return new Features(gates.enabled("DRAAdminAccess"), gates.enabled("DRAPrioritizedList"));
        }
    }

    private final Features features;

    /** {@code workers}: upstream runs 50 for its one queue of pod and claim keys. */
    public ResourceClaimController(ControllerContext context, int workers) {
        this(context, workers, Features.from(context.options().featureGates()));
    }

    public ResourceClaimController(ControllerContext context, int workers, Features features) {
        super(context, Pod.class, QUEUE, workers);
        this.features = features;
        this.pods = context.informers().informerFor(Pod.class);
        this.claims = context.informers().informerFor(ResourceClaim.class);
        this.templates = context.informers().informerFor(ResourceClaimTemplate.class);
        this.recorder = context.recorderFor(EVENT_SOURCE);
        this.creations = new ClientGoCreates(context.client());
        synchronized (pods) {
            if (!pods.getIndexer().getIndexers().containsKey(POD_RESOURCE_CLAIM_INDEX)) {
                pods.addIndexers(Map.of(POD_RESOURCE_CLAIM_INDEX, ClaimNames::podResourceClaimKeys));
            }
        }
        synchronized (claims) {
            if (!claims.getIndexer().getIndexers().containsKey(CLAIM_POD_OWNER_INDEX)) {
                claims.addIndexers(Map.of(CLAIM_POD_OWNER_INDEX, ClaimNames::podOwnerUids));
            }
        }
        ResourceClaimMetrics metrics = new ResourceClaimMetrics(context.metrics());
        this.metrics = metrics;
        this.claimSync = new ClaimSync(context, pods, claims, deletedObjects);
        // the resource_claims gauge counts the claim cache (upstream's collector reads its lister)
        claims.addEventHandler(ResourceEventHandlerFuncs.<ResourceClaim>of(
                claim -> metrics.claimChanged(null, claim),
                metrics::claimChanged,
                claim -> metrics.claimChanged(claim, null)));
        pods.addEventHandler(ResourceEventHandlerFuncs.<Pod>of(
                pod -> enqueuePod(pod, false),
                (old, cur) -> enqueuePod(cur, false),
                pod -> enqueuePod(pod, true)));
        claims.addEventHandler(ResourceEventHandlerFuncs.<ResourceClaim>of(
                claim -> enqueueResourceClaim(claim, false),
                (old, cur) -> enqueueResourceClaim(cur, false),
                claim -> enqueueResourceClaim(claim, true)));
    }

    /** The controller's own metrics (created claims, the resource_claims gauge). */
    ResourceClaimMetrics metrics() {
        return metrics;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, claims, templates);
    }

    @Override
    protected OnAddFilter<? super Pod> primaryAddFilter() {
        return pod -> pod.getSpec() != null && pod.getSpec().getResourceClaims() != null
                && !pod.getSpec().getResourceClaims().isEmpty() && podNeedsWork(pod);
    }

    @Override
    protected OnUpdateFilter<? super Pod> primaryUpdateFilter() {
        return (old, cur) -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting resource claim controller");
        // upstream's handler sees every claim of the informer's first list; here the queue opens with the
        // Operator, after those adds: queue them now
        for (ResourceClaim claim : claims.getStore().list()) {
            enqueueResourceClaim(claim, false);
        }
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down resource claim controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("%s failed with: %s", key.startsWith(CLAIM_KEY_PREFIX) ? key : "pod:" + key, shortMessage(e));
    }

    /** Upstream's enqueuePod. */
    void enqueuePod(Pod pod, boolean deleted) {
        if (pod.getSpec() == null || pod.getSpec().getResourceClaims() == null || pod.getSpec().getResourceClaims().isEmpty()) {
            return;
        }
        if (deleted) {
            deletedObjects.add(pod.getMetadata().getUid());
        }
        if (!podNeedsClaims(pod, deleted)) {
            // the pod will not run (any more): its claims may be released or deleted
            for (PodResourceClaim podClaim : pod.getSpec().getResourceClaims()) {
                ClaimNames.Name n = ClaimNames.name(pod, podClaim);
                if (!n.failed() && n.name() != null) {
                    queue.add(CLAIM_KEY_PREFIX + pod.getMetadata().getNamespace() + "/" + n.name());
                }
            }
            // as upstream: never the pod itself, whose deleted claim would otherwise be made again
            return;
        }
        if (podNeedsWork(pod)) {
            queue.add(key(pod));
        }
    }

    /** Upstream's podNeedsClaims. */
    static boolean podNeedsClaims(Pod pod, boolean deleted) {
        if (deleted || ClaimNames.isPodTerminal(pod)) {
            return false;
        }
        return !(pod.getMetadata().getDeletionTimestamp() != null && !ClaimNames.scheduled(pod));
    }

    /** Upstream's podNeedsWork. */
    boolean podNeedsWork(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        for (PodResourceClaim podClaim : pod.getSpec().getResourceClaims()) {
            ClaimNames.Name n = ClaimNames.name(pod, podClaim);
            if (n.failed()) {
                return true;
            }
            if (n.name() == null) {
                return false;
            }
            ResourceClaim claim = claims.getStore().getByKey(pod.getMetadata().getNamespace() + "/" + n.name());
            if (claim == null) {
                return podClaim.getResourceClaimTemplateName() != null;
            }
            if (n.mustCheckOwner() && ClaimNames.isForPod(pod, claim) != null) {
                return false;
            }
            if (!ClaimNames.scheduled(pod)) {
                continue;
            }
            if (ClaimNames.allocated(claim) && !ClaimNames.isReservedForPod(pod, claim)) {
                return true;
            }
        }
        return false;
    }

    /** Upstream's enqueueResourceClaim: the claim (unless deleted) and the pods using it. */
    void enqueueResourceClaim(ResourceClaim claim, boolean deleted) {
        String key = claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
        if (!deleted) {
            queue.add(CLAIM_KEY_PREFIX + key);
        }
        for (Pod pod : Indexes.byIndex(pods, POD_RESOURCE_CLAIM_INDEX, key)) {
            enqueuePod(pod, false);
        }
    }

    static final class ClaimException extends Exception {
        ClaimException(String message) {
            super(message);
        }
    }

    /** Upstream's sync: a claim key goes to syncClaim, any other is a pod's. */
    @Override
    protected void sync(String key) throws Exception {
        if (key.startsWith(CLAIM_KEY_PREFIX)) {
            claimSync.sync(key.substring(CLAIM_KEY_PREFIX.length()));
        } else {
            syncPod(key);
        }
    }

    /** Upstream's syncPod. */
    private void syncPod(String key) throws Exception {
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        Pod pod = pods.getStore().getByKey(key);
        if (pod == null) {
            log.tracef("nothing to do for pod %s, it is gone", key);
            return;
        }
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            log.tracef("nothing to do for pod %s, it is marked for deletion", key);
            return;
        }
        List<PodResourceClaim> podClaims = pod.getSpec().getResourceClaims() == null ? List.of()
                : pod.getSpec().getResourceClaims();
        Map<String, String> newPodClaims = new LinkedHashMap<>();
        for (PodResourceClaim podClaim : podClaims) {
            try {
                handleClaim(pod, podClaim, newPodClaims);
            } catch (ClaimException e) {
                recorder.event(pod, EventRecorder.WARNING, "FailedResourceClaimCreation",
                        "PodResourceClaim " + podClaim.getName() + ": " + e.getMessage());
                throw new ClaimException(String.format("pod %s/%s, PodResourceClaim %s: %s", k.namespace(), k.name(),
                        podClaim.getName(), e.getMessage()));
            }
        }
        if (!newPodClaims.isEmpty()) {
            applyResourceClaimStatuses(k.namespace(), k.name(), newPodClaims);
        }
        if (!ClaimNames.scheduled(pod)) {
            log.tracef("nothing to do for pod %s, scheduler will deal with it", key);
            return;
        }
        for (PodResourceClaim podClaim : podClaims) {
            ClaimNames.Name n = ClaimNames.name(pod, podClaim);
            if (n.failed()) {
                throw new ClaimException(n.error());
            }
            if (n.name() == null) {
                continue;
            }
            ResourceClaim claim = claims.getStore().getByKey(k.namespace() + "/" + n.name());
            if (claim == null) {
                return;
            }
            if (n.mustCheckOwner()) {
                String notForPod = ClaimNames.isForPod(pod, claim);
                if (notForPod != null) {
                    throw new ClaimException(notForPod);
                }
            }
            if (ClaimNames.allocated(claim) && !ClaimNames.isReservedForPod(pod, claim)) {
                log.tracef("reserve claim %s for pod %s", n.name(), key);
                reserveForPod(pod, claim);
            }
        }
    }

    private static List<io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequest> requests(ResourceClaimTemplate template) {
        var spec = template.getSpec() == null ? null : template.getSpec().getSpec();
        if (spec == null || spec.getDevices() == null || spec.getDevices().getRequests() == null) {
            return List.of();
        }
        return spec.getDevices().getRequests();
    }

    /** needsAdminAccess: a request asking for exactly admin access. */
    static boolean needsAdminAccess(ResourceClaimTemplate template) {
        return requests(template).stream().anyMatch(r -> r.getExactly() != null
                && Boolean.TRUE.equals(r.getExactly().getAdminAccess()));
    }

    /** hasPrioritizedList: a request with firstAvailable subrequests. */
    static boolean hasPrioritizedList(ResourceClaimTemplate template) {
        return requests(template).stream().anyMatch(r -> r.getFirstAvailable() != null && !r.getFirstAvailable().isEmpty());
    }

    /** Upstream's handleClaim. */
    private void handleClaim(Pod pod, PodResourceClaim podClaim, Map<String, String> newPodClaims) throws ClaimException {
        String namespace = pod.getMetadata().getNamespace();
        ClaimNames.Name n = ClaimNames.name(pod, podClaim);
        if (n.failed() && !n.claimNotFound()) {
            throw new ClaimException("checking for claim before creating it: " + n.error());
        }
        if (!n.failed()) {
            if (n.name() == null) {
                return;
            }
            if (!n.name().isEmpty()) {
                ResourceClaim claim = claims.getStore().getByKey(namespace + "/" + n.name());
                if (claim != null) {
                    String notForPod = n.mustCheckOwner() ? ClaimNames.isForPod(pod, claim) : null;
                    if (notForPod == null) {
                        log.tracef("claim already created: podClaim %s, resourceClaim %s", podClaim.getName(), n.name());
                        return;
                    }
                    log.errorf("claim that was created for the pod is no longer owned by the pod, creating a new one: %s "
                            + "(podClaim %s, resourceClaim %s)", notForPod, podClaim.getName(), n.name());
                }
            }
        }
        String templateName = podClaim.getResourceClaimTemplateName();
        if (templateName == null) {
            return;
        }
        ResourceClaim claim = findPodResourceClaim(pod, podClaim);
        if (claim == null) {
            ResourceClaimTemplate template = templates.getStore().getByKey(namespace + "/" + templateName);
            if (template == null) {
                throw new ClaimException(String.format("resource claim template \"%s\": resourceclaimtemplate.resource.k8s.io \"%s\" not found",
                        templateName, templateName));
            }
            if (!features.adminAccess() && needsAdminAccess(template)) {
                throw new ClaimException("admin access is requested, but the feature is disabled");
            }
            if (!features.prioritizedList() && hasPrioritizedList(template)) {
                throw new ClaimException("template includes a prioritized list of subrequests, but the feature is disabled");
            }
            claim = newClaim(pod, podClaim, template);
            String adminAccess = adminAccessLabel(claim);
            try {
                ResourceClaim toCreate = claim;
                claim = creations.create(c -> c.resources(ResourceClaim.class).inNamespace(namespace).resource(toCreate).create());
            } catch (RuntimeException e) {
                metrics.created("failure", adminAccess);
                if (ApiErrors.isOutcomeUnknown(e)) {
                    created.markUncertain(pod.getMetadata().getUid());
                }
                throw new ClaimException("create ResourceClaim " + nullToEmpty(claim.getMetadata().getName()) + ": "
                        + ApiErrors.message(e));
            }
            metrics.created("success", adminAccess);
            log.debugf("Created ResourceClaim %s/%s for pod %s", namespace, claim.getMetadata().getName(), key(pod));
            created.created(pod.getMetadata().getUid(), claim);
        }
        newPodClaims.put(podClaim.getName(), claim.getMetadata().getName());
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    /** The claim upstream creates from the template: generateName, the pod as controller, the annotation. */
    static ResourceClaim newClaim(Pod pod, PodResourceClaim podClaim, ResourceClaimTemplate template) {
        ObjectMeta templateMeta = template.getSpec() == null ? null : template.getSpec().getMetadata();
        Map<String, String> annotations = new LinkedHashMap<>();
        if (templateMeta != null && templateMeta.getAnnotations() != null) {
            annotations.putAll(templateMeta.getAnnotations());
        }
        annotations.put(POD_RESOURCE_CLAIM_ANNOTATION, podClaim.getName());
        ObjectMeta meta = new ObjectMeta();
        meta.setGenerateName(generateName(pod.getMetadata().getName(), podClaim.getName()));
        meta.setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod")
                .withName(pod.getMetadata().getName()).withUid(pod.getMetadata().getUid()).withController(true)
                .withBlockOwnerDeletion(true).build()));
        meta.setAnnotations(annotations);
        if (templateMeta != null && templateMeta.getLabels() != null) {
            meta.setLabels(new LinkedHashMap<>(templateMeta.getLabels()));
        }
        ResourceClaim claim = new ResourceClaim();
        claim.setMetadata(meta);
        claim.setSpec(template.getSpec() == null || template.getSpec().getSpec() == null ? null
                : DeepCopy.of(template.getSpec().getSpec()));
        return claim;
    }

    /** Upstream's generateName: {@code <pod>-<claim>-}, both cut in proportion to fit 57 characters. */
    static String generateName(String podName, String podClaimName) {
        String generateName = podName + "-" + podClaimName + "-";
        int maxBaseLen = 57; // room for the API server's 5 random characters in 63
        if (generateName.length() > maxBaseLen) {
            int len = generateName.length();
            generateName = podName.substring(0, podName.length() * maxBaseLen / len) + "-"
                    + podClaimName.substring(0, podClaimName.length() * maxBaseLen / len);
        }
        return generateName;
    }

    /** Upstream's getAdminAccessMetricLabel. */
    static String adminAccessLabel(ResourceClaim claim) {
        if (claim == null || claim.getSpec() == null || claim.getSpec().getDevices() == null
                || claim.getSpec().getDevices().getRequests() == null) {
            return "false";
        }
        for (DeviceRequest request : claim.getSpec().getDevices().getRequests()) {
            if (request.getExactly() != null && Boolean.TRUE.equals(request.getExactly().getAdminAccess())) {
                return "true";
            }
        }
        return "false";
    }

    /**
     * Upstream's findPodResourceClaim: a claim controlled by the pod and annotated with the pod claim's
     * name, in the cache or among the claims created and not yet cached; after a create whose answer was
     * lost, on a consistent list from the API server.
     */
    private ResourceClaim findPodResourceClaim(Pod pod, PodResourceClaim podClaim) throws ClaimException {
        String uid = pod.getMetadata().getUid();
        List<ResourceClaim> candidates = new ArrayList<>(Indexes.byIndex(claims, CLAIM_POD_OWNER_INDEX, uid));
        candidates.addAll(created.notYetCached(uid, claims.getStore()::getByKey));
        if (created.isUncertain(uid)) {
            List<ResourceClaim> live;
            try {
                live = context.client().resources(ResourceClaim.class).inNamespace(pod.getMetadata().getNamespace()).list()
                        .getItems();
            } catch (RuntimeException e) {
                throw new ClaimException("listing ResourceClaims after a lost create: " + ApiErrors.message(e));
            }
            for (ResourceClaim claim : live) {
                if (ClaimNames.podOwnerUids(claim).contains(uid)) {
                    created.created(uid, claim);
                    candidates.add(claim);
                }
            }
            created.settled(uid);
        }
        for (ResourceClaim claim : candidates) {
            Map<String, String> annotations = claim.getMetadata().getAnnotations();
            if (annotations != null && podClaim.getName().equals(annotations.get(POD_RESOURCE_CLAIM_ANNOTATION))) {
                return claim;
            }
        }
        return null;
    }

    /** Upstream's ApplyStatus of the pod's resourceClaimStatuses (server-side apply, forced). */
    private void applyResourceClaimStatuses(String namespace, String name, Map<String, String> newPodClaims)
            throws ClaimException {
        List<Map<String, String>> statuses = new ArrayList<>();
        newPodClaims.forEach((podClaim, claim) -> statuses.add(Map.of("name", podClaim, "resourceClaimName", claim)));
        Map<String, Object> apply = Map.of("apiVersion", "v1", "kind", "Pod",
                "metadata", Map.of("name", name, "namespace", namespace),
                "status", Map.of("resourceClaimStatuses", statuses));
        KubernetesClient client = context.client();
        try {
            client.pods().inNamespace(namespace).withName(name).subresource("status").patch(new PatchContext.Builder()
                    .withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(FIELD_MANAGER).withForce(true).build(),
                    Json.api().asJson(apply));
        } catch (RuntimeException e) {
            throw new ClaimException(String.format("update pod %s/%s ResourceClaimStatuses: %s", namespace, name,
                    ApiErrors.message(e)));
        }
    }

    /** Upstream's reserveForPod. */
    private void reserveForPod(Pod pod, ResourceClaim claim) throws ClaimException {
        ResourceClaim copy = DeepCopy.of(claim);
        List<io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimConsumerReference> reserved = new ArrayList<>(
                ClaimNames.reservedFor(copy));
        reserved.add(new io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimConsumerReferenceBuilder()
                .withResource("pods").withName(pod.getMetadata().getName()).withUid(pod.getMetadata().getUid()).build());
        copy.getStatus().setReservedFor(reserved);
        try {
            context.client().resources(ResourceClaim.class).inNamespace(copy.getMetadata().getNamespace()).resource(copy)
                    .updateStatus();
        } catch (RuntimeException e) {
            throw new ClaimException(String.format("reserve claim %s/%s for pod: %s", copy.getMetadata().getNamespace(),
                    copy.getMetadata().getName(), ApiErrors.message(e)));
        }
    }

    /** Claims created and not yet seen by the cache (tests). */
    CreatedClaims created() {
        return created;
    }

}
