package io.qkcm.manager;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Upstream's controller table (cmd/kube-controller-manager NewControllerDescriptors, v1.34), in
 * upstream's registration order. Implemented controllers are attached with {@link #implement}.
 */
public final class ControllerCatalog {

    /**
     * The client (ServiceAccount and user-agent) name each controller uses upstream where it differs
     * from the controller name (cmd/kube-controller-manager start functions, ClientOrDie(...)).
     */
    private static final Map<String, String> CLIENT_NAMES = Map.ofEntries(
            Map.entry("serviceaccount-token-controller", "tokens-controller"),
            Map.entry("daemonset-controller", "daemon-set-controller"),
            Map.entry("service-cidr-controller", "service-cidrs-controller"),
            Map.entry("bootstrap-signer-controller", "bootstrap-signer"),
            Map.entry("token-cleaner-controller", "token-cleaner"),
            Map.entry("horizontal-pod-autoscaler-controller", "horizontal-pod-autoscaler"),
            Map.entry("certificatesigningrequest-signing-controller", "certificate-controller"),
            Map.entry("certificatesigningrequest-approving-controller", "certificate-controller"),
            Map.entry("certificatesigningrequest-cleaner-controller", "certificate-controller"),
            Map.entry("podcertificaterequest-cleaner-controller", "podcertificaterequestcleaner"),
            Map.entry("root-ca-certificate-publisher-controller", "root-ca-cert-publisher"),
            Map.entry("node-ipam-controller", "node-controller"),
            Map.entry("node-lifecycle-controller", "node-controller"),
            Map.entry("taint-eviction-controller", "node-controller"),
            Map.entry("persistentvolume-binder-controller", "persistent-volume-binder"),
            Map.entry("persistentvolume-attach-detach-controller", "attachdetach-controller"),
            Map.entry("persistentvolume-expander-controller", "expand-controller"),
            Map.entry("resourceclaim-controller", "resource-claim-controller"),
            Map.entry("endpoints-controller", "endpoint-controller"),
            Map.entry("endpointslice-mirroring-controller", "endpointslicemirroring-controller"),
            Map.entry("replicationcontroller-controller", "replication-controller"),
            Map.entry("pod-garbage-collector-controller", "pod-garbage-collector"),
            Map.entry("serviceaccount-controller", "service-account-controller"),
            Map.entry("garbage-collector-controller", "generic-garbage-collector"),
            Map.entry("legacy-serviceaccount-token-cleaner-controller", "legacy-service-account-token-cleaner"),
            Map.entry("storageversion-garbage-collector-controller", "storage-version-garbage-collector"));

    private final Map<String, KnownController> byName = new LinkedHashMap<>();
    private final Map<String, String> aliasToName = new LinkedHashMap<>();

    private ControllerCatalog() {
    }

    /** The upstream table with nothing implemented; {@link Controllers} fills in qkcm's controllers. */
    public static ControllerCatalog upstream() {
        ControllerCatalog c = new ControllerCatalog();
        // serviceaccount-token-controller is "special" upstream: started before all others.
        c.add("serviceaccount-token-controller", "serviceaccount-token");
        c.add("endpoints-controller", "endpoint");
        c.add("endpointslice-controller", "endpointslice");
        c.add("endpointslice-mirroring-controller", "endpointslicemirroring");
        c.add("replicationcontroller-controller", "replicationcontroller");
        c.add("pod-garbage-collector-controller", "podgc");
        c.add("resourcequota-controller", "resourcequota");
        c.add("namespace-controller", "namespace");
        c.add("serviceaccount-controller", "serviceaccount");
        c.add("garbage-collector-controller", "garbagecollector");
        c.add("daemonset-controller", "daemonset");
        c.add("job-controller", "job");
        c.add("deployment-controller", "deployment");
        c.add("replicaset-controller", "replicaset");
        c.add("horizontal-pod-autoscaler-controller", "horizontalpodautoscaling");
        c.add("disruption-controller", "disruption");
        c.add("statefulset-controller", "statefulset");
        c.add("cronjob-controller", "cronjob");
        c.add("certificatesigningrequest-signing-controller", "csrsigning");
        c.add("certificatesigningrequest-approving-controller", "csrapproving");
        c.add("certificatesigningrequest-cleaner-controller", "csrcleaner");
        c.gated("podcertificaterequest-cleaner-controller", null, "PodCertificateRequest");
        c.add("ttl-controller", "ttl");
        c.off("bootstrap-signer-controller", "bootstrapsigner");
        c.off("token-cleaner-controller", "tokencleaner");
        c.add("node-ipam-controller", "nodeipam");
        c.add("node-lifecycle-controller", "nodelifecycle");
        c.cloud("service-lb-controller", "service");
        c.cloud("node-route-controller", "route");
        c.cloud("cloud-node-lifecycle-controller", "cloud-node-lifecycle");
        c.add("persistentvolume-binder-controller", "persistentvolume-binder");
        c.add("persistentvolume-attach-detach-controller", "attachdetach");
        c.add("persistentvolume-expander-controller", "persistentvolume-expander");
        c.add("clusterrole-aggregation-controller", "clusterrole-aggregation");
        c.add("persistentvolumeclaim-protection-controller", "pvc-protection");
        c.add("persistentvolume-protection-controller", "pv-protection");
        c.gated("volumeattributesclass-protection-controller", null, "VolumeAttributesClass");
        c.add("ttl-after-finished-controller", "ttl-after-finished");
        c.add("root-ca-certificate-publisher-controller", "root-ca-cert-publisher");
        c.gated("kube-apiserver-serving-clustertrustbundle-publisher-controller", null, "ClusterTrustBundle");
        c.add("ephemeral-volume-controller", "ephemeral-volume");
        c.gated("storageversion-garbage-collector-controller", "storage-version-gc", "APIServerIdentity", "StorageVersionAPI");
        c.gated("resourceclaim-controller", "resource-claim-controller", "DynamicResourceAllocation");
        c.gated("device-taint-eviction-controller", null, "DynamicResourceAllocation", "DRADeviceTaints");
        c.add("legacy-serviceaccount-token-cleaner-controller", "legacy-service-account-token-cleaner");
        c.add("validatingadmissionpolicy-status-controller", null);
        c.gated("taint-eviction-controller", null, "SeparateTaintEvictionController");
        c.gated("service-cidr-controller", null, "MultiCIDRServiceAllocator");
        c.gated("storage-version-migrator-controller", "svm", "StorageVersionMigrator");
        c.register(new KnownController("selinux-warning-controller", List.of(), true,
                List.of("SELinuxChangePolicy"), false, Optional.empty(), Optional.empty()));
        return c;
    }

    private void add(String name, String alias) {
        register(new KnownController(name, alias == null ? List.of() : List.of(alias), false, List.of(), false,
                Optional.empty(), Optional.empty()));
    }

    private void off(String name, String alias) {
        register(new KnownController(name, List.of(alias), true, List.of(), false, Optional.empty(), Optional.empty()));
    }

    private void cloud(String name, String alias) {
        register(new KnownController(name, List.of(alias), false, List.of(), true, Optional.empty(), Optional.empty()));
    }

    private void gated(String name, String alias, String... gates) {
        register(new KnownController(name, alias == null ? List.of() : List.of(alias), false, List.of(gates),
                false, Optional.empty(), Optional.empty()));
    }

    private void register(KnownController controller) {
        byName.put(controller.name(), controller);
        for (String alias : controller.aliases()) {
            aliasToName.put(alias, controller.name());
        }
    }

    /** Attaches qkcm's implementation to an upstream controller name. */
    public ControllerCatalog implement(String name, KnownController.Initializer init) {
        return attach(name, init, Optional.empty());
    }

    /** A controller qkcm implements only in part; {@code missing} says what upstream does that it does not. */
    public ControllerCatalog implementPartially(String name, KnownController.Initializer init, String missing) {
        return attach(name, init, Optional.of(missing));
    }

    private ControllerCatalog attach(String name, KnownController.Initializer init, Optional<String> partial) {
        KnownController known = byName.get(name);
        if (known == null) {
            throw new IllegalArgumentException("not an upstream controller: " + name);
        }
        byName.put(name, new KnownController(known.name(), known.aliases(), known.disabledByDefault(),
                known.requiredFeatureGates(), known.cloudProvider(), Optional.of(init), partial));
        return this;
    }

    /** The partially implemented controllers and what each lacks. */
    public Map<String, String> partial() {
        Map<String, String> out = new LinkedHashMap<>();
        byName.values().forEach(k -> k.partial().ifPresent(p -> out.put(k.name(), p)));
        return out;
    }

    /** Upstream's client name for a controller: its ServiceAccount and user-agent suffix. */
    public static String clientName(String controller) {
        return CLIENT_NAMES.getOrDefault(controller, controller);
    }

    public List<KnownController> all() {
        return List.copyOf(byName.values());
    }

    public Optional<KnownController> byName(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The canonical name for a name or an old alias, if either is known. */
    public Optional<String> canonical(String nameOrAlias) {
        if (byName.containsKey(nameOrAlias)) {
            return Optional.of(nameOrAlias);
        }
        return Optional.ofNullable(aliasToName.get(nameOrAlias));
    }

    public List<String> names() {
        List<String> names = new ArrayList<>(byName.keySet());
        Collections.sort(names);
        return names;
    }

    public List<String> disabledByDefault() {
        return byName.values().stream().filter(KnownController::disabledByDefault).map(KnownController::name)
                .sorted().toList();
    }
}
