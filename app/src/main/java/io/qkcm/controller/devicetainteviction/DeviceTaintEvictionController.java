package io.qkcm.controller.devicetainteviction;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1beta2.Device;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.devicetainteviction.TimedWorkerQueue.PodRef;
import io.qkcm.controller.devicetainteviction.metrics.DeviceTaintEvictionMetrics;
import io.qkcm.controller.util.resource.DeviceClass;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.controller.util.resource.ResourceSlice;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * device-taint-eviction-controller (upstream pkg/controller/devicetainteviction): deletes the scheduled pods
 * whose allocated ResourceClaims use a device with a NoExecute taint the allocation does not tolerate, at the
 * taint's time plus the smallest matching tolerationSeconds; a taint gone (or tolerated) before then cancels
 * the deletion. Taints come from the ResourceSlices and from the DeviceTaintRules selecting their devices
 * ({@link SliceTracker}).
 *
 * <p>Upstream has no work queue: everything is decided in the event handlers of pods, claims and (patched)
 * slices, serialized by one mutex, and the deletions run on timers. Here the handlers are put on the shared
 * informers when this replica starts leading ({@link #onStart}) and taken off when it stops, as upstream's
 * Run adds and removes them. The reconciler's own queue (DeviceTaintRules) receives nothing: its primary
 * filter lets no event through.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class DeviceTaintEvictionController extends KeyReconciler<DeviceTaintRule> {

    public static final String NAME = "device-taint-eviction-controller";
    static final String NO_EXECUTE = "NoExecute";

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<ResourceClaim> claims;
    private final SharedIndexInformer<ResourceSlice> slices;
    private final SharedIndexInformer<DeviceTaintRule> rules;
    private final SharedIndexInformer<DeviceClass> classes;
    private final Clock clock;
    private final DeviceTaintEvictionMetrics metrics;
    private final DeviceTaintPodEviction eviction;
    private final ExecutorService workers;
    private final TimedWorkerQueue evictions;
    private final SliceTracker tracker;

    /** Upstream's mutex: every handler runs under it. */
    private final Object mutex = new Object();
    /** Allocated claims by namespace/name, with their eviction time (null: no untolerated NoExecute taint). */
    private final Map<String, AllocatedClaim> allocatedClaims = new HashMap<>();
    private final Map<PoolID, Pool> pools = new HashMap<>();

    private final List<Runnable> removeHandlers = new ArrayList<>();

    record PoolID(String driverName, String poolName) {
    }

    record AllocatedClaim(ResourceClaim claim, Instant evictionTime) {
    }

    /** The ResourceSlice tracker's event source. */
    static final String TRACKER_COMPONENT = "resource_slice_tracker";

    /** @param consumableCapacity DRAConsumableCapacity: CEL selectors see device.allowMultipleAllocations */
    DeviceTaintEvictionController(ControllerContext context, Clock clock, boolean consumableCapacity) {
        super(context, DeviceTaintRule.class, NAME, 1);
        this.pods = context.informers().informerFor(Pod.class);
        this.claims = context.informers().informerFor(ResourceClaim.class);
        this.slices = context.informers().informerFor(ResourceSlice.class);
        this.rules = context.informers().informerFor(DeviceTaintRule.class);
        this.classes = context.informers().informerFor(DeviceClass.class);
        this.clock = clock;
        this.metrics = new DeviceTaintEvictionMetrics(context.metrics());
        this.workers = context.newApiCallPool("device-taint-eviction", 4);
        this.eviction = new DeviceTaintPodEviction(context.client(), context.events(), metrics, clock);
        this.evictions = new TimedWorkerQueue(eviction::evict, clock, context.delayer(), workers);
        this.tracker = new SliceTracker(slices.getStore(), rules.getStore(), classes.getStore(), this::handleSliceChange,
                new DeviceCel(consumableCapacity), context.recorderFor(TRACKER_COMPONENT));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, claims, slices, rules, classes);
    }

    /** Nothing is queued: the handlers decide (upstream has no queue). */
    @Override
    protected GenericFilter<? super DeviceTaintRule> primaryFilter() {
        return rule -> false;
    }

    @Override
    protected void sync(String key) {
        // never queued (see primaryFilter)
    }

    DeviceTaintEvictionMetrics metrics() {
        return metrics;
    }

    boolean evictionScheduled(String namespace, String name) {
        return evictions.hasWork(namespace + "/" + name);
    }

    /** Upstream's Run: the claim and pod handlers, then the tracker's (slices, rules, classes). */
    @Override
    public void onStart() {
        log.infof("Starting: controller %s", NAME);
        add(claims, ResourceEventHandlerFuncs.<ResourceClaim>of(
                c -> locked(() -> handleClaimChange(null, c)),
                (o, n) -> locked(() -> handleClaimChange(o, n)),
                c -> locked(() -> handleClaimChange(c, null))));
        add(pods, ResourceEventHandlerFuncs.<Pod>of(
                p -> locked(() -> handlePodChange(null, p)),
                (o, n) -> locked(() -> handlePodChange(o, n)),
                p -> locked(() -> handlePodChange(p, null))));
        add(slices, ResourceEventHandlerFuncs.<ResourceSlice>of(
                s -> locked(() -> tracker.sliceChanged(s.getMetadata().getName())),
                (o, n) -> locked(() -> tracker.sliceChanged(n.getMetadata().getName())),
                s -> locked(() -> tracker.sliceChanged(s.getMetadata().getName()))));
        add(rules, ResourceEventHandlerFuncs.<DeviceTaintRule>of(
                r -> locked(tracker::rulesChanged),
                (o, n) -> locked(tracker::rulesChanged),
                r -> locked(tracker::rulesChanged)));
        add(classes, ResourceEventHandlerFuncs.<DeviceClass>of(
                c -> locked(tracker::rulesChanged),
                (o, n) -> locked(tracker::rulesChanged),
                c -> locked(tracker::rulesChanged)));
    }

    private <T> void add(SharedIndexInformer<T> informer, ResourceEventHandler<T> handler) {
        informer.addEventHandler(handler);
        removeHandlers.add(() -> informer.removeEventHandler(handler));
    }

    @Override
    public void onShutdown() {
        removeHandlers.forEach(Runnable::run);
        removeHandlers.clear();
        evictions.shutDown();
        workers.shutdownNow();
        synchronized (mutex) {
            allocatedClaims.clear();
            pools.clear();
            tracker.clear();
        }
    }

    private void locked(Runnable r) {
        synchronized (mutex) {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.errorf(e, "device taint eviction: handling an event failed");
            }
        }
    }

    // ---- claims

    static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    private static AllocationResult allocation(ResourceClaim claim) {
        return claim.getStatus() == null ? null : claim.getStatus().getAllocation();
    }

    private static List<ResourceClaimConsumerReference> reservedFor(ResourceClaim claim) {
        return claim.getStatus() == null || claim.getStatus().getReservedFor() == null ? List.of()
                : claim.getStatus().getReservedFor();
    }

    /** Upstream's handleClaimChange. */
    void handleClaimChange(ResourceClaim oldClaim, ResourceClaim newClaim) {
        ResourceClaim claim = newClaim != null ? newClaim : oldClaim;
        String name = key(claim.getMetadata().getNamespace(), claim.getMetadata().getName());
        if (newClaim == null) {
            allocatedClaims.remove(name);
            handlePods(claim);
            return;
        }
        if (oldClaim == null) {
            if (allocation(claim) == null) {
                return;
            }
            allocatedClaims.put(name, new AllocatedClaim(claim, evictionTime(allocation(claim))));
            handlePods(claim);
            return;
        }
        if (!Objects.equals(oldClaim.getMetadata().getUid(), newClaim.getMetadata().getUid())) {
            handleClaimChange(oldClaim, null);
            handleClaimChange(null, newClaim);
            return;
        }
        Runnable syncBothClaims = () -> {
            if (!reservedFor(oldClaim).equals(reservedFor(newClaim))) {
                handlePods(oldClaim);
                handlePods(newClaim);
            } else {
                handlePods(claim);
            }
        };
        if (allocation(oldClaim) == null && allocation(newClaim) != null) {
            allocatedClaims.put(name, new AllocatedClaim(claim, evictionTime(allocation(claim))));
            syncBothClaims.run();
            return;
        }
        if (allocation(oldClaim) != null && allocation(newClaim) == null) {
            allocatedClaims.remove(name);
            syncBothClaims.run();
            return;
        }
        if (allocation(claim) != null) {
            // the allocation is immutable: the eviction time stays
            AllocatedClaim known = allocatedClaims.get(name);
            allocatedClaims.put(name, new AllocatedClaim(claim, known == null ? null : known.evictionTime()));
            syncBothClaims.run();
        }
    }

    /**
     * Upstream's evictionTime: the earliest time at which a NoExecute taint of an allocated device is no longer
     * tolerated (the taint's timeAdded plus the smallest tolerationSeconds of the matching tolerations), null if
     * none; a matching toleration without tolerationSeconds tolerates the taint for ever.
     */
    Instant evictionTime(AllocationResult allocation) {
        Instant evictionTime = null;
        if (allocation.getDevices() == null || allocation.getDevices().getResults() == null) {
            return null;
        }
        for (DeviceRequestAllocationResult allocated : allocation.getDevices().getResults()) {
            Pool pool = pools.get(new PoolID(allocated.getDriver(), allocated.getPool()));
            Device device = pool == null ? null : pool.getDevice(allocated.getDevice());
            if (device == null) {
                continue;
            }
            nextTaint:
            for (DeviceTaint taint : device.getTaints() == null ? List.<DeviceTaint>of() : device.getTaints()) {
                if (!NO_EXECUTE.equals(taint.getEffect())) {
                    continue;
                }
                Instant newEvictionTime = Times.parse(taint.getTimeAdded());
                boolean haveToleration = false;
                long tolerationSeconds = Long.MAX_VALUE;
                for (DeviceToleration toleration : allocated.getTolerations() == null ? List.<DeviceToleration>of()
                        : allocated.getTolerations()) {
                    if (NO_EXECUTE.equals(toleration.getEffect()) && toleratesTaint(toleration, taint)) {
                        if (toleration.getTolerationSeconds() == null) {
                            continue nextTaint;
                        }
                        tolerationSeconds = Math.min(tolerationSeconds, Math.max(0, toleration.getTolerationSeconds()));
                        haveToleration = true;
                    }
                }
                if (haveToleration && newEvictionTime != null) {
                    newEvictionTime = newEvictionTime.plusSeconds(tolerationSeconds);
                }
                if (evictionTime == null) {
                    evictionTime = newEvictionTime;
                    continue;
                }
                if (newEvictionTime != null && newEvictionTime.isBefore(evictionTime)) {
                    evictionTime = newEvictionTime;
                }
            }
        }
        return evictionTime;
    }

    /** The resourceclaim helper's ToleratesTaint. */
    static boolean toleratesTaint(DeviceToleration toleration, DeviceTaint taint) {
        if (notEmpty(toleration.getEffect()) && !toleration.getEffect().equals(taint.getEffect())) {
            return false;
        }
        if (notEmpty(toleration.getKey()) && !toleration.getKey().equals(taint.getKey())) {
            return false;
        }
        String operator = toleration.getOperator() == null ? "" : toleration.getOperator();
        return switch (operator) {
            case "", "Equal" -> Objects.equals(nullToEmpty(toleration.getValue()), nullToEmpty(taint.getValue()));
            case "Exists" -> true;
            default -> false;
        };
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    // ---- slices

    /** Upstream's handleSliceChange: re-evaluates the claims using a device whose NoExecute taints changed. */
    void handleSliceChange(ResourceSlice oldSlice, ResourceSlice newSlice) {
        ResourceSlice slice = newSlice != null ? newSlice : oldSlice;
        PoolID poolID = new PoolID(slice.getSpec().getDriver(),
                slice.getSpec().getPool() == null ? null : slice.getSpec().getPool().getName());
        Pool p = pools.computeIfAbsent(poolID, id -> new Pool());
        List<Pool.TaintedDevice> oldDeviceTaints = p.getTaintedDevices();
        p.removeSlice(oldSlice);
        p.addSlice(newSlice);
        if (p.isEmpty()) {
            pools.remove(poolID);
        }
        List<Pool.TaintedDevice> newDeviceTaints = p.getTaintedDevices();
        if (oldDeviceTaints.isEmpty() && newDeviceTaints.isEmpty()) {
            return;
        }
        Set<String> modifiedDevices = modifiedDevices(oldDeviceTaints, newDeviceTaints);
        for (Map.Entry<String, AllocatedClaim> e : new ArrayList<>(allocatedClaims.entrySet())) {
            AllocatedClaim claim = e.getValue();
            if (!usesDevice(allocation(claim.claim()), poolID, modifiedDevices)) {
                continue;
            }
            Instant newEvictionTime = evictionTime(allocation(claim.claim()));
            if (Objects.equals(newEvictionTime, claim.evictionTime())) {
                continue;
            }
            allocatedClaims.put(e.getKey(), new AllocatedClaim(claim.claim(), newEvictionTime));
            handlePods(claim.claim());
        }
    }

    /** The devices whose NoExecute taints differ between the two lists, both sorted by device name. */
    static Set<String> modifiedDevices(List<Pool.TaintedDevice> oldDeviceTaints, List<Pool.TaintedDevice> newDeviceTaints) {
        Set<String> modified = new HashSet<>();
        int o = 0;
        int n = 0;
        while (o < oldDeviceTaints.size() || n < newDeviceTaints.size()) {
            while (o < oldDeviceTaints.size() && n < newDeviceTaints.size()
                    && oldDeviceTaints.get(o).deviceName().equals(newDeviceTaints.get(n).deviceName())) {
                if (!SliceTracker.taintsEqual(List.of(oldDeviceTaints.get(o).taint()), List.of(newDeviceTaints.get(n).taint()))) {
                    modified.add(oldDeviceTaints.get(o).deviceName());
                }
                o++;
                n++;
            }
            String newDeviceName = n < newDeviceTaints.size() ? newDeviceTaints.get(n).deviceName() : "";
            while (o < oldDeviceTaints.size() && !oldDeviceTaints.get(o).deviceName().equals(newDeviceName)) {
                modified.add(oldDeviceTaints.get(o).deviceName());
                o++;
            }
            String oldDeviceName = o < oldDeviceTaints.size() ? oldDeviceTaints.get(o).deviceName() : "";
            if (n < newDeviceTaints.size() && !newDeviceTaints.get(n).deviceName().equals(oldDeviceName)) {
                modified.add(newDeviceTaints.get(n).deviceName());
                n++;
            }
        }
        return modified;
    }

    private static boolean usesDevice(AllocationResult allocation, PoolID pool, Set<String> modifiedDevices) {
        if (allocation == null || allocation.getDevices() == null || allocation.getDevices().getResults() == null) {
            return false;
        }
        for (DeviceRequestAllocationResult device : allocation.getDevices().getResults()) {
            if (Objects.equals(device.getDriver(), pool.driverName()) && Objects.equals(device.getPool(), pool.poolName())
                    && modifiedDevices.contains(device.getDevice())) {
                return true;
            }
        }
        return false;
    }

    // ---- pods

    /** Upstream's handlePodChange. */
    void handlePodChange(Pod oldPod, Pod newPod) {
        if (newPod == null) {
            evictions.cancelWork(key(oldPod.getMetadata().getNamespace(), oldPod.getMetadata().getName()));
            return;
        }
        if (oldPod != null && Objects.equals(oldPod.getSpec().getNodeName(), newPod.getSpec().getNodeName())
                && claimStatuses(oldPod).equals(claimStatuses(newPod))) {
            return;
        }
        handlePod(newPod);
    }

    private static List<PodResourceClaimStatus> claimStatuses(Pod pod) {
        return pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null ? List.of()
                : pod.getStatus().getResourceClaimStatuses();
    }

    /** Upstream's handlePods: the pods a claim is reserved for. */
    private void handlePods(ResourceClaim claim) {
        for (ResourceClaimConsumerReference consumer : reservedFor(claim)) {
            if (nullToEmpty(consumer.getApiGroup()).isEmpty() && "pods".equals(consumer.getResource())) {
                Pod pod = pods.getStore().getByKey(key(claim.getMetadata().getNamespace(), consumer.getName()));
                if (pod == null) {
                    return;
                }
                if (!Objects.equals(pod.getMetadata().getUid(), consumer.getUid())) {
                    return;
                }
                handlePod(pod);
            }
        }
    }

    /** Upstream's handlePod: schedules the pod's eviction at the earliest eviction time of its claims, or cancels it. */
    private void handlePod(Pod pod) {
        if (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
            return;
        }
        Instant evictionTime = null;
        for (PodResourceClaim podClaim : pod.getSpec().getResourceClaims() == null ? List.<PodResourceClaim>of()
                : pod.getSpec().getResourceClaims()) {
            ClaimName claimName = claimName(pod, podClaim);
            if (claimName == null || claimName.name() == null) {
                continue;
            }
            AllocatedClaim allocated = allocatedClaims.get(key(pod.getMetadata().getNamespace(), claimName.name()));
            if (allocated == null) {
                continue;
            }
            if (claimName.mustCheckOwner() && !isForPod(pod, allocated.claim())) {
                continue;
            }
            if (!isReservedForPod(pod, allocated.claim())) {
                continue;
            }
            if (allocated.evictionTime() == null) {
                continue;
            }
            if (evictionTime == null || allocated.evictionTime().isBefore(evictionTime)) {
                evictionTime = allocated.evictionTime();
            }
        }
        PodRef ref = new PodRef(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid());
        if (evictionTime != null) {
            evictions.updateWork(ref, clock.instant(), evictionTime);
        } else if (evictions.cancelWork(ref.key())) {
            eviction.emitCancelPodDeletionEvent(ref);
        }
    }

    /** The resourceclaim helper's Name result: the claim's name (null: not needed) and whether its owner must be checked. */
    record ClaimName(String name, boolean mustCheckOwner) {
    }

    /** The resourceclaim helper's Name; null where it returns an error (not created yet, or unsupported). */
    static ClaimName claimName(Pod pod, PodResourceClaim podClaim) {
        if (podClaim.getResourceClaimName() != null) {
            return new ClaimName(podClaim.getResourceClaimName(), false);
        }
        if (podClaim.getResourceClaimTemplateName() != null) {
            for (PodResourceClaimStatus status : claimStatuses(pod)) {
                if (podClaim.getName().equals(status.getName())) {
                    return new ClaimName(status.getResourceClaimName(), true);
                }
            }
            return null;
        }
        return null;
    }

    /** The resourceclaim helper's IsForPod: the pod is the claim's controlling owner. */
    static boolean isForPod(Pod pod, ResourceClaim claim) {
        if (claim.getMetadata().getOwnerReferences() == null) {
            return false;
        }
        return claim.getMetadata().getOwnerReferences().stream().anyMatch(o -> Boolean.TRUE.equals(o.getController())
                && Objects.equals(o.getUid(), pod.getMetadata().getUid()));
    }

    /** The resourceclaim helper's IsReservedForPod. */
    static boolean isReservedForPod(Pod pod, ResourceClaim claim) {
        return reservedFor(claim).stream().anyMatch(r -> Objects.equals(r.getUid(), pod.getMetadata().getUid()));
    }

    /** The slices of one driver's pool, only those of the newest generation counting. */
    static final class Pool {
        record TaintedDevice(String deviceName, DeviceTaint taint) {
        }

        // identity: the tracker hands over the same patched objects it stored
        private final Set<ResourceSlice> slices = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        private long maxGeneration = Long.MIN_VALUE;

        boolean isEmpty() {
            return slices.isEmpty();
        }

        private static long generation(ResourceSlice slice) {
            Long g = slice.getSpec().getPool() == null ? null : slice.getSpec().getPool().getGeneration();
            return g == null ? 0 : g;
        }

        void addSlice(ResourceSlice slice) {
            if (slice == null) {
                return;
            }
            slices.add(slice);
            maxGeneration = Math.max(maxGeneration, generation(slice));
        }

        void removeSlice(ResourceSlice slice) {
            if (slice == null) {
                return;
            }
            slices.remove(slice);
            if (generation(slice) == maxGeneration) {
                maxGeneration = slices.stream().mapToLong(Pool::generation).max().orElse(Long.MIN_VALUE);
            }
        }

        /** Upstream's getTaintedDevices: the NoExecute taints of current devices, by device name. */
        List<TaintedDevice> getTaintedDevices() {
            List<TaintedDevice> buffer = new ArrayList<>();
            for (ResourceSlice slice : slices) {
                if (generation(slice) != maxGeneration) {
                    continue;
                }
                for (Device device : SliceTracker.devices(slice)) {
                    for (DeviceTaint taint : device.getTaints() == null ? List.<DeviceTaint>of() : device.getTaints()) {
                        if (NO_EXECUTE.equals(taint.getEffect())) {
                            buffer.add(new TaintedDevice(device.getName(), taint));
                        }
                    }
                }
            }
            buffer.sort(Comparator.comparing(TaintedDevice::deviceName));
            return buffer;
        }

        Device getDevice(String deviceName) {
            for (ResourceSlice slice : slices) {
                if (generation(slice) != maxGeneration) {
                    continue;
                }
                for (Device device : SliceTracker.devices(slice)) {
                    if (deviceName.equals(device.getName())) {
                        return device;
                    }
                }
            }
            return null;
        }
    }
}
