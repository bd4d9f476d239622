package io.qkcm.controller.servicecidrs;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddress;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * service-cidr-controller (upstream pkg/controller/servicecidrs): every ServiceCIDR carries the
 * {@value #FINALIZER} finalizer and the Ready condition. A ServiceCIDR being deleted keeps its finalizer
 * while an IPAddress allocated by the API server would be left outside every other ServiceCIDR (Ready
 * False, reason Terminating), and loses it {@link #DELETION_GRACE_PERIOD} after its deletion began, so
 * that the API servers' allocators have stopped using it by then.
 *
 * <p>Upstream's handlers: an added ServiceCIDR queues the ServiceCIDRs it overlaps (its own add,
 * update and delete are JOSDK's primary events); an added or deleted IPAddress queues the ServiceCIDRs
 * containing it.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ServiceCIDRsController extends KeyReconciler<ServiceCIDR> {

    public static final String NAME = "service-cidr-controller";
    /** Upstream's queue name (its TypedRateLimitingQueueConfig). */
    public static final String QUEUE = "ipaddresses";
    public static final String FINALIZER = "networking.k8s.io/service-cidr-finalizer";
    static final String CONDITION_READY = "Ready";
    static final String REASON_TERMINATING = "Terminating";
    static final String MESSAGE_TERMINATING =
            "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR";
    static final String MESSAGE_READY = "Kubernetes Service CIDR is ready";
    /** ipaddress.kubernetes.io/managed-by of the IPAddresses the API server's allocator makes. */
    static final String LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by";
    static final String LABEL_IP_FAMILY = "ipaddress.kubernetes.io/ip-family";
    static final String IPALLOCATOR = "ipallocator.k8s.io";
    /** Upstream's deletionGracePeriod. */
    static final Duration DELETION_GRACE_PERIOD = Duration.ofSeconds(10);
    /** Upstream's maxRetries. */
    static final int MAX_RETRIES = 15;
    /** Upstream's worker count (startServiceCIDRsController runs 5). */
    static final int WORKERS = 5;

    private final SharedIndexInformer<ServiceCIDR> serviceCIDRs;
    private final SharedIndexInformer<IPAddress> ipAddresses;
    private final Clock clock;

    public ServiceCIDRsController(ControllerContext context) {
        this(context, Clock.systemUTC());
    }

    ServiceCIDRsController(ControllerContext context, Clock clock) {
        super(context, ServiceCIDR.class, QUEUE, WORKERS);
        this.clock = clock;
        this.serviceCIDRs = context.informers().informerFor(ServiceCIDR.class);
        this.ipAddresses = context.informers().informerFor(IPAddress.class);
        serviceCIDRs.addEventHandler(ResourceEventHandlerFuncs.<ServiceCIDR>of(
                cidr -> overlappingServiceCIDRs(cidr).forEach(queue::add), null, null));
        ipAddresses.addEventHandler(ResourceEventHandlerFuncs.<IPAddress>of(
                ip -> containingServiceCIDRs(ip).forEach(queue::add), null,
                ip -> containingServiceCIDRs(ip).forEach(queue::add)));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(serviceCIDRs, ipAddresses);
    }

    @Override
    protected int maxRetries() {
        return MAX_RETRIES;
    }

    @Override
    public void onStart() {
        log.infof("Starting: controller %s", NAME);
    }

    @Override
    public void onShutdown() {
        log.infof("Shutting down: controller %s", NAME);
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.debugf("Error syncing ServiceCIDR, retrying: ServiceCIDR %s err %s", key, shortMessage(e));
    }

    @Override
    protected void logDropped(String key, Exception e) {
        log.infof("Dropping ServiceCIDR out of the queue: ServiceCIDR %s err %s", key, shortMessage(e));
    }

    /** Upstream's overlappingServiceCIDRs: the ServiceCIDRs overlapping any range of {@code serviceCIDR}. */
    Set<String> overlappingServiceCIDRs(ServiceCIDR serviceCIDR) {
        Set<String> result = new LinkedHashSet<>();
        for (String cidr : cidrs(serviceCIDR)) {
            Prefix prefix = Prefix.parse(cidr);
            if (prefix != null) {
                overlapsPrefix(prefix).forEach(c -> result.add(c.getMetadata().getName()));
            }
        }
        return result;
    }

    /** Upstream's containingServiceCIDRs: for an IPAddress of the API server's allocator, the ServiceCIDRs holding it. */
    Set<String> containingServiceCIDRs(IPAddress ip) {
        Map<String, String> labels = ip.getMetadata().getLabels();
        if (labels == null || !IPALLOCATOR.equals(labels.get(LABEL_MANAGED_BY))) {
            return Set.of();
        }
        byte[] address = Prefix.parseAddr(ip.getMetadata().getName());
        if (address == null) {
            return Set.of();
        }
        Set<String> result = new LinkedHashSet<>();
        containsAddress(address).forEach(c -> result.add(c.getMetadata().getName()));
        return result;
    }

    /** Upstream's sync. */
    @Override
    protected void sync(String key) throws Exception {
        log.tracef("syncing ServiceCIDR: ServiceCIDR %s", key);
        ServiceCIDR cidr = serviceCIDRs.getStore().getByKey(key);
        if (cidr == null) {
            log.tracef("ServiceCIDR no longer exist: ServiceCIDR %s", key);
            return;
        }
        String deletionTimestamp = cidr.getMetadata().getDeletionTimestamp();
        if (deletionTimestamp != null && !deletionTimestamp.isEmpty()) {
            if (!canDeleteCIDR(cidr)) {
                // stays until an event on a ServiceCIDR or IPAddress queues it again
                updateConditionIfNeeded(cidr, "False", REASON_TERMINATING, MESSAGE_TERMINATING);
                return;
            }
            // the API servers' allocators may still see it as usable: wait for the deletion to reach them
            Duration sinceDeletion = Duration.between(Instant.parse(deletionTimestamp), clock.instant());
            Duration untilDeleted = DELETION_GRACE_PERIOD.minus(sinceDeletion);
            if (!untilDeleted.isNegative() && !untilDeleted.isZero()) {
                queue.addAfter(key, untilDeleted);
                return;
            }
            removeFinalizerIfNeeded(cidr);
            return;
        }
        addFinalizerIfNeeded(cidr);
        try {
            updateConditionIfNeeded(cidr, "True", "", MESSAGE_READY);
        } catch (RuntimeException e) {
            log.infof("error updating default ServiceCIDR status: error %s", shortMessage(e));
            context.events().event(cidr, EventRecorder.WARNING, "KubernetesServiceCIDRError",
                    "The ServiceCIDR Status can not be set to Ready=True");
            throw e;
        }
    }

    /**
     * Upstream's canDeleteCIDR: true when every range of the ServiceCIDR lies inside another ServiceCIDR,
     * or no IPAddress of the API server's allocator lies in this ServiceCIDR alone.
     */
    boolean canDeleteCIDR(ServiceCIDR serviceCIDR) {
        String name = serviceCIDR.getMetadata().getName();
        boolean hasParent = true;
        for (String cidr : cidrs(serviceCIDR)) {
            Prefix prefix = Prefix.parse(cidr);
            if (prefix != null) {
                List<ServiceCIDR> containing = containsPrefix(prefix);
                if (containing.isEmpty() || containing.size() == 1 && containing.get(0).getMetadata().getName().equals(name)) {
                    hasParent = false;
                }
            }
        }
        if (hasParent) {
            log.infof("Deleting ServiceCIDR contained in other ServiceCIDR: ServiceCIDR %s", name);
            return true;
        }
        for (String cidr : cidrs(serviceCIDR)) {
            String family = ipFamilyOfCIDR(cidr);
            for (IPAddress ip : ipAddresses.getStore().list()) {
                Map<String, String> labels = ip.getMetadata().getLabels();
                if (labels == null || !family.equals(labels.get(LABEL_IP_FAMILY))
                        || !IPALLOCATOR.equals(labels.get(LABEL_MANAGED_BY))) {
                    continue;
                }
                byte[] address = Prefix.parseAddr(ip.getMetadata().getName());
                if (address == null) {
                    log.infof("[SHOULD NOT HAPPEN] unexpected error parsing IPAddress: IPAddress %s",
                            ip.getMetadata().getName());
                    continue;
                }
                List<ServiceCIDR> containing = containsAddress(address);
                if (containing.size() == 1 && containing.get(0).getMetadata().getName().equals(name)) {
                    log.infof("Deleting ServiceCIDR blocked by IP address: IPAddress %s", ip.getMetadata().getName());
                    return false;
                }
            }
        }
        log.infof("Deleting ServiceCIDR no longer have orphan IPs: ServiceCIDR %s", name);
        return true;
    }

    /** convertToV1IPFamily(IPFamilyOfCIDRString(cidr)): IPv4, IPv6, or "" when it does not parse. */
    private static String ipFamilyOfCIDR(String cidr) {
        int slash = cidr.indexOf('/');
        byte[] ip = slash < 0 ? null : io.qkcm.controller.GoIP.parseSloppy(cidr.substring(0, slash));
        if (ip == null) {
            return "";
        }
        return io.qkcm.controller.GoIP.isIPv4(ip) ? "IPv4" : "IPv6";
    }

    private void addFinalizerIfNeeded(ServiceCIDR cidr) {
        if (cidr.getMetadata().getFinalizers() != null && cidr.getMetadata().getFinalizers().contains(FINALIZER)) {
            return;
        }
        patchFinalizers(cidr.getMetadata().getName(), Map.of("finalizers", List.of(FINALIZER)));
        log.debugf("Added protection finalizer to ServiceCIDR: ServiceCIDR %s", cidr.getMetadata().getName());
    }

    private void removeFinalizerIfNeeded(ServiceCIDR cidr) {
        if (cidr.getMetadata().getFinalizers() == null || !cidr.getMetadata().getFinalizers().contains(FINALIZER)) {
            return;
        }
        patchFinalizers(cidr.getMetadata().getName(), Map.of("$deleteFromPrimitiveList/finalizers", List.of(FINALIZER)));
        log.debugf("Removed protection finalizer from ServiceCIDRs: ServiceCIDR %s", cidr.getMetadata().getName());
    }

    /** Upstream's strategic merge patch of metadata; a ServiceCIDR gone meanwhile is no error. */
    private void patchFinalizers(String name, Map<String, Object> metadata) {
        String patch = Json.api().asJson(Map.of("metadata", metadata));
        try {
            context.client().network().v1().serviceCIDRs().withName(name)
                    .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
        } catch (RuntimeException e) {
            if (!ApiErrors.isNotFound(e)) {
                throw e;
            }
        }
    }

    /**
     * Upstream's updateConditionIfNeeded: nothing when the Ready condition already has this status,
     * reason and message; otherwise a server-side apply of the status (field manager
     * {@value #NAME}, forced) with the condition as upstream's apply configuration writes it.
     */
    void updateConditionIfNeeded(ServiceCIDR cidr, String status, String reason, String message) {
        Condition current = null;
        if (cidr.getStatus() != null && cidr.getStatus().getConditions() != null) {
            current = cidr.getStatus().getConditions().stream().filter(c -> CONDITION_READY.equals(c.getType()))
                    .findFirst().orElse(null);
        }
        if (current != null && status.equals(current.getStatus()) && reason.equals(nullToEmpty(current.getReason()))
                && message.equals(nullToEmpty(current.getMessage()))) {
            log.tracef("ServiceCIDR condition already up to date: ServiceCIDR %s conditionType %s",
                    cidr.getMetadata().getName(), CONDITION_READY);
            return;
        }
        log.debugf("Updating ServiceCIDR condition: ServiceCIDR %s conditionType %s newStatus %s newReason %s",
                cidr.getMetadata().getName(), CONDITION_READY, status, reason);
        Map<String, Object> condition = new LinkedHashMap<>();
        condition.put("type", CONDITION_READY);
        condition.put("status", status);
        condition.put("lastTransitionTime", clock.instant().truncatedTo(ChronoUnit.SECONDS).toString());
        condition.put("reason", reason);
        condition.put("message", message);
        Map<String, Object> apply = new LinkedHashMap<>();
        apply.put("kind", "ServiceCIDR");
        apply.put("apiVersion", "networking.k8s.io/v1");
        apply.put("metadata", Map.of("name", cidr.getMetadata().getName()));
        apply.put("status", Map.of("conditions", List.of(condition)));
        context.client().network().v1().serviceCIDRs().withName(cidr.getMetadata().getName()).subresource("status")
                .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(NAME)
                        .withForce(true).build(), Json.api().asJson(apply));
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    private static List<String> cidrs(ServiceCIDR serviceCIDR) {
        return serviceCIDR.getSpec() == null || serviceCIDR.getSpec().getCidrs() == null ? List.of()
                : serviceCIDR.getSpec().getCidrs();
    }

    /** servicecidr.OverlapsPrefix over the cache (a ServiceCIDR once per overlapping range, as upstream). */
    private List<ServiceCIDR> overlapsPrefix(Prefix prefix) {
        List<ServiceCIDR> result = new ArrayList<>();
        for (ServiceCIDR serviceCIDR : serviceCIDRs.getStore().list()) {
            for (String cidr : cidrs(serviceCIDR)) {
                Prefix p = Prefix.parse(cidr);
                if (p != null && p.overlaps(prefix)) {
                    result.add(serviceCIDR);
                }
            }
        }
        return result;
    }

    /** servicecidr.ContainsPrefix: the ServiceCIDRs with a range holding all of {@code prefix}. */
    private List<ServiceCIDR> containsPrefix(Prefix prefix) {
        List<ServiceCIDR> result = new ArrayList<>();
        for (ServiceCIDR serviceCIDR : serviceCIDRs.getStore().list()) {
            for (String cidr : cidrs(serviceCIDR)) {
                Prefix p = Prefix.parse(cidr);
                if (p != null && p.overlaps(prefix) && p.bits() <= prefix.bits()) {
                    result.add(serviceCIDR);
                }
            }
        }
        return result;
    }

    /** servicecidr.ContainsAddress: the ServiceCIDRs with a range that could have handed out {@code address}. */
    private List<ServiceCIDR> containsAddress(byte[] address) {
        List<ServiceCIDR> result = new ArrayList<>();
        for (ServiceCIDR serviceCIDR : serviceCIDRs.getStore().list()) {
            for (String cidr : cidrs(serviceCIDR)) {
                Prefix p = Prefix.parse(cidr);
                if (p != null && p.containsServiceIP(address)) {
                    result.add(serviceCIDR);
                }
            }
        }
        return result;
    }
}
