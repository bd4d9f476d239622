package io.qkcm.controller.endpoint;

import io.qkcm.runtime.informers.Indexes;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointPort;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.EndpointSubsets;
import io.qkcm.controller.GoIP;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.endpointslice.util.EndpointSliceUtil;
import io.qkcm.endpointslice.util.PortNotFoundException;
import io.qkcm.endpointslice.util.ServicePodHandler;
import io.qkcm.endpointslice.util.TriggerTimeTracker;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * endpoints-controller (upstream pkg/controller/endpoint): the core/v1 Endpoints of every Service with a
 * selector, from the pods it selects. Keyed by Service "namespace/name". Ready pods (or every pod with
 * publishNotReadyAddresses) are addresses, the others notReadyAddresses, one subset per distinct set of
 * resolved ports, repacked as upstream; at most 1000 addresses. Endpoints of a deleted Service are deleted;
 * those of selector-less and ExternalName Services are never touched. Reads the shared Pod, Service and
 * Endpoints informers.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class EndpointsController extends KeyReconciler<Service> {

    public static final String NAME = "endpoints-controller";
    /** Upstream's ControllerName: the event source and the managed-by label value. */
    public static final String CONTROLLER_NAME = "endpoint-controller";
    static final String QUEUE = "endpoint";
    /** Retries before a Service is dropped from the queue (5ms*2^14 = 82s at the last one), as upstream. */
    static final int MAX_RETRIES = 15;

    static final String LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
    /** The annotation of the leader-election records once kept in Endpoints; never garbage-collected. */
    static final String LEADER_ELECTION_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Service> services;
    private final SharedIndexInformer<Endpoints> endpoints;
    private final StaleEndpointsTracker staleEndpointsTracker = new StaleEndpointsTracker();
    private final TriggerTimeTracker triggerTimeTracker = new TriggerTimeTracker();
    private final EventRecorder recorder;
    private final Duration batchPeriod;
    private final EndpointsDependent endpointsDependent;

    /** {@code workers}: --concurrent-endpoint-syncs; {@code batchPeriod}: --endpoint-updates-batch-period. */
    public EndpointsController(ControllerContext context, int workers, Duration batchPeriod) {
        super(context, Service.class, QUEUE, workers);
        this.batchPeriod = batchPeriod;
        this.recorder = context.recorderFor(CONTROLLER_NAME);
        this.pods = context.informers().informerFor(Pod.class);
        this.services = context.informers().informerFor(Service.class);
        this.endpoints = context.informers().informerFor(Endpoints.class);
        this.endpointsDependent = new EndpointsDependent(endpoints.getStore(), staleEndpointsTracker, recorder);

        // Service adds, updates and deletes reach the reconciler as JOSDK's primary events (upstream's
        // handler queues all three); pod changes are batched; a deleted Endpoints queues its Service.
        pods.addEventHandler(new ServicePodHandler(services, queue::addAfter, batchPeriod));
        // Only deletions matter: a deleted Endpoints of a Service with a selector is recreated.
        endpoints.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Endpoints ep) {
            }

            @Override
            public void onUpdate(Endpoints oldEp, Endpoints ep) {
            }

            @Override
            public void onDelete(Endpoints ep, boolean deletedFinalStateUnknown) {
                queue.add(Cache.metaNamespaceKeyFunc(ep));
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, services, endpoints);
    }

    /** Upstream's Run: the leftover sweep once the caches have synced. */
    @Override
    public void onStart() {
        try {
            checkLeftoverEndpoints();
        } catch (RuntimeException e) {
            log.errorf("Unable to list endpoints (%s); orphaned endpoints will not be cleaned up", e.toString());
        }
    }

    /**
     * Upstream's checkLeftoverEndpoints, once at startup: every cached Endpoints is queued, so one whose
     * Service was deleted while no controller ran gets deleted by its sync (whatever its labels, as
     * upstream). Leader-election records kept in Endpoints have no Service and are left alone.
     */
    void checkLeftoverEndpoints() {
        for (Endpoints ep : endpoints.getStore().list()) {
            Map<String, String> annotations = ep.getMetadata().getAnnotations();
            if (annotations != null && annotations.containsKey(LEADER_ELECTION_ANNOTATION)) {
                continue;
            }
            queue.add(Cache.metaNamespaceKeyFunc(ep));
        }
    }

    /** Upstream's maxRetries: a Service failing more often is dropped from the queue. */
    @Override
    protected int maxRetries() {
        return MAX_RETRIES;
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.debugf("Error syncing endpoints, retrying: service %s: %s", key, ApiErrors.message(e));
    }

    @Override
    protected void logDropped(String key, Exception e) {
        log.infof("Dropping service %s out of the queue: %s", key, ApiErrors.message(e));
        log.error("endpoints sync failed", e);
    }

    @Override
    protected void sync(String key, Service primary, Context<Service> ctx) throws Exception {
        syncService(key, primary, ctx);
    }

    private void syncService(String key, Service primary, Context<Service> ctx) {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        String namespace = parts.namespace();
        String name = parts.name();

        Service service = services.getStore().getByKey(key);
        if (service == null) {
            // The Service is gone: so are its Endpoints. (Missed while not running: see checkLeftoverEndpoints.)
            endpointsDependent.delete(primary, ctx);
            triggerTimeTracker.deleteService(namespace, name);
            staleEndpointsTracker.delete(namespace, name);
            return;
        }
        if ("ExternalName".equals(service.getSpec().getType())) {
            return;
        }
        Map<String, String> selector = service.getSpec().getSelector();
        if (selector == null || selector.isEmpty()) {
            // Selector-less Services get their Endpoints from elsewhere (the API server never stores an
            // empty selector, so an empty map here is upstream's nil).
            return;
        }

        List<Pod> selected = new ArrayList<>();
        for (Pod pod : Indexes.byIndex(pods, Cache.NAMESPACE_INDEX, namespace)) {
            if (matches(selector, pod.getMetadata().getLabels())) {
                selected.add(pod);
            }
        }
        // Computed even when nothing changes, so the tracker's state follows every sync.
        Instant triggerTime = triggerTimeTracker.computeEndpointLastChangeTriggerTime(namespace, service, selected);

        boolean publishNotReady = Boolean.TRUE.equals(service.getSpec().getPublishNotReadyAddresses());
        List<ServicePort> servicePorts = service.getSpec().getPorts() == null ? List.of() : service.getSpec().getPorts();
        List<EndpointSubset> subsets = new ArrayList<>();
        for (Pod pod : selected) {
            if (!EndpointSliceUtil.shouldPodBeInEndpoints(pod, publishNotReady)) {
                continue;
            }
            EndpointAddress epa = podToEndpointAddressForService(service, pod);
            if (epa == null) {
                // no pod IP of the Service's family (e.g. nodes upgraded to dual-stack one at a time)
                log.debugf("Failed to find endpoint for service %s with ClusterIP %s on pod %s", key,
                        service.getSpec().getClusterIP(), pod.getMetadata().getName());
                continue;
            }
            if (EndpointSliceUtil.shouldSetHostname(pod, service)) {
                epa.setHostname(pod.getSpec().getHostname());
            }
            if (servicePorts.isEmpty()) {
                // a headless Service may have no ports: its addresses go in a subset without ports
                if ("None".equals(service.getSpec().getClusterIP())) {
                    addEndpointSubset(subsets, pod, epa, null, publishNotReady);
                }
                continue;
            }
            for (ServicePort servicePort : servicePorts) {
                int portNum;
                try {
                    portNum = EndpointSliceUtil.findPort(pod, servicePort);
                } catch (PortNotFoundException e) {
                    log.tracef("Failed to find port for service %s: %s", key, e.getMessage());
                    continue;
                }
                addEndpointSubset(subsets, pod, copy(epa), endpointPortFromServicePort(servicePort, portNum),
                        publishNotReady);
            }
        }
        subsets = EndpointSubsets.repack(subsets);

        log.debugf("Endpoints for %s: %d ready, %d not ready", key, count(subsets, true), count(subsets, false));
        ctx.managedWorkflowAndDependentResourceContext().put(EndpointsDependent.SUBSETS,
                new EndpointsDependent.Computed(subsets, triggerTime));
        endpointsDependent.reconcile(service, ctx);
    }

    private static int count(List<EndpointSubset> subsets, boolean ready) {
        int n = 0;
        for (EndpointSubset s : subsets) {
            List<EndpointAddress> l = ready ? s.getAddresses() : s.getNotReadyAddresses();
            n += l == null ? 0 : l.size();
        }
        return n;
    }

    /** labels.Set(selector).AsSelector().Matches(podLabels). */
    private static boolean matches(Map<String, String> selector, Map<String, String> labels) {
        for (Map.Entry<String, String> e : selector.entrySet()) {
            if (labels == null || !Objects.equals(labels.get(e.getKey()), e.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** helper.IsServiceIPSet: a cluster IP that is neither "None" nor empty. */
    static boolean isServiceIPSet(Service service) {
        String ip = service.getSpec().getClusterIP();
        return ip != null && !ip.isEmpty() && !"None".equals(ip);
    }

    private static Map<String, String> copyOrNull(Map<String, String> m) {
        return m == null ? null : new HashMap<>(m);
    }

    /**
     * Upstream's podToEndpointAddressForService: the pod's first IP of the Service's (primary) family,
     * re-formatted canonically; null when the pod has none. A Service without ipFamilies (never so from
     * an API server, which defaults them; upstream would index out of range) is taken by its clusterIP's
     * family, IPv4 when that is not an IP.
     */
    static EndpointAddress podToEndpointAddressForService(Service svc, Pod pod) {
        boolean wantIPv6;
        List<String> families = svc.getSpec().getIpFamilies();
        if (families != null && !families.isEmpty()) {
            wantIPv6 = "IPv6".equals(families.get(0));
        } else {
            wantIPv6 = GoIP.isIPv6(GoIP.parseSloppy(svc.getSpec().getClusterIP()));
        }
        String endpointIP = null;
        List<PodIP> podIPs = pod.getStatus() == null ? null : pod.getStatus().getPodIPs();
        if (podIPs != null) {
            for (PodIP podIP : podIPs) {
                byte[] ip = GoIP.parseSloppy(podIP.getIp());
                if (ip == null) {
                    // upstream would turn an unparseable IP into "<nil>"; the API server validates pod IPs
                    continue;
                }
                if (wantIPv6 == GoIP.isIPv6(ip)) {
                    endpointIP = GoIP.format(ip);
                    break;
                }
            }
        }
        if (endpointIP == null) {
            return null;
        }
        EndpointAddress epa = new EndpointAddress();
        epa.setIp(endpointIP);
        // upstream points at the pod's nodeName even when empty, so the field is always written
        epa.setNodeName(pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName());
        ObjectReference ref = new ObjectReference();
        ref.setKind("Pod");
        ref.setNamespace(pod.getMetadata().getNamespace());
        ref.setName(pod.getMetadata().getName());
        ref.setUid(pod.getMetadata().getUid());
        epa.setTargetRef(ref);
        return epa;
    }

    private static EndpointAddress copy(EndpointAddress a) {
        EndpointAddress c = new EndpointAddress();
        c.setIp(a.getIp());
        c.setHostname(a.getHostname());
        c.setNodeName(a.getNodeName());
        ObjectReference r = a.getTargetRef();
        ObjectReference rc = new ObjectReference();
        rc.setKind(r.getKind());
        rc.setNamespace(r.getNamespace());
        rc.setName(r.getName());
        rc.setUid(r.getUid());
        c.setTargetRef(rc);
        return c;
    }

    static EndpointPort endpointPortFromServicePort(ServicePort servicePort, int portNum) {
        EndpointPort p = new EndpointPort();
        p.setName(servicePort.getName());
        p.setPort(portNum);
        p.setProtocol(servicePort.getProtocol());
        p.setAppProtocol(servicePort.getAppProtocol());
        return p;
    }

    /** Upstream's addEndpointSubset: one single-address subset, ready or not as the pod and the Service say. */
    private static void addEndpointSubset(List<EndpointSubset> subsets, Pod pod, EndpointAddress epa,
            EndpointPort epp, boolean tolerateUnready) {
        List<EndpointPort> ports = new ArrayList<>();
        if (epp != null) {
            ports.add(epp);
        }
        EndpointSubset s = new EndpointSubset();
        s.setPorts(ports);
        if (tolerateUnready || EndpointSliceUtil.isPodReady(pod)) {
            s.setAddresses(new ArrayList<>(List.of(epa)));
            s.setNotReadyAddresses(new ArrayList<>());
        } else {
            s.setAddresses(new ArrayList<>());
            s.setNotReadyAddresses(new ArrayList<>(List.of(epa)));
        }
        subsets.add(s);
    }
}
