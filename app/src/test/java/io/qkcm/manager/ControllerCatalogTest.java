package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * The catalog is upstream's table (cmd/kube-controller-manager NewControllerDescriptors, v1.34), and each
 * implemented controller's descriptor lives beside the controller.
 */
class ControllerCatalogTest {

    /** One row of upstream's table: name, aliases, client name, gates, off by default, cloud provider. */
    record Row(String name, List<String> aliases, String client, List<String> gates, boolean off, boolean cloud) {
        static Row of(ControllerDescriptor d) {
            return new Row(d.name(), d.aliases(), d.clientName(), d.requiredFeatureGates(), d.disabledByDefault(),
                    d.cloudProvider());
        }
    }

    private static Row row(String name, String alias, String client, String... gates) {
        return new Row(name, alias == null ? List.of() : List.of(alias), client == null ? name : client,
                List.of(gates), false, false);
    }

    private static Row off(Row r) {
        return new Row(r.name(), r.aliases(), r.client(), r.gates(), true, r.cloud());
    }

    private static Row cloud(Row r) {
        return new Row(r.name(), r.aliases(), r.client(), r.gates(), r.off(), true);
    }

    /** Upstream v1.34, in registration order, with the client names of its start functions' ClientOrDie. */
    private static final List<Row> UPSTREAM = List.of(
            row("serviceaccount-token-controller", "serviceaccount-token", "tokens-controller"),
            row("endpoints-controller", "endpoint", "endpoint-controller"),
            row("endpointslice-controller", "endpointslice", null),
            row("endpointslice-mirroring-controller", "endpointslicemirroring", "endpointslicemirroring-controller"),
            row("replicationcontroller-controller", "replicationcontroller", "replication-controller"),
            row("pod-garbage-collector-controller", "podgc", "pod-garbage-collector"),
            row("resourcequota-controller", "resourcequota", null),
            row("namespace-controller", "namespace", null),
            row("serviceaccount-controller", "serviceaccount", "service-account-controller"),
            row("garbage-collector-controller", "garbagecollector", "generic-garbage-collector"),
            row("daemonset-controller", "daemonset", "daemon-set-controller"),
            row("job-controller", "job", null),
            row("deployment-controller", "deployment", null),
            row("replicaset-controller", "replicaset", null),
            row("horizontal-pod-autoscaler-controller", "horizontalpodautoscaling", "horizontal-pod-autoscaler"),
            row("disruption-controller", "disruption", null),
            row("statefulset-controller", "statefulset", null),
            row("cronjob-controller", "cronjob", null),
            row("certificatesigningrequest-signing-controller", "csrsigning", "certificate-controller"),
            row("certificatesigningrequest-approving-controller", "csrapproving", "certificate-controller"),
            row("certificatesigningrequest-cleaner-controller", "csrcleaner", "certificate-controller"),
            row("podcertificaterequest-cleaner-controller", null, "podcertificaterequestcleaner",
                    "PodCertificateRequest"),
            row("ttl-controller", "ttl", null),
            off(row("bootstrap-signer-controller", "bootstrapsigner", "bootstrap-signer")),
            off(row("token-cleaner-controller", "tokencleaner", "token-cleaner")),
            row("node-ipam-controller", "nodeipam", "node-controller"),
            row("node-lifecycle-controller", "nodelifecycle", "node-controller"),
            cloud(row("service-lb-controller", "service", null)),
            cloud(row("node-route-controller", "route", null)),
            cloud(row("cloud-node-lifecycle-controller", "cloud-node-lifecycle", null)),
            row("persistentvolume-binder-controller", "persistentvolume-binder", "persistent-volume-binder"),
            row("persistentvolume-attach-detach-controller", "attachdetach", "attachdetach-controller"),
            row("persistentvolume-expander-controller", "persistentvolume-expander", "expand-controller"),
            row("clusterrole-aggregation-controller", "clusterrole-aggregation", null),
            row("persistentvolumeclaim-protection-controller", "pvc-protection", "pvc-protection-controller"),
            row("persistentvolume-protection-controller", "pv-protection", "pv-protection-controller"),
            row("volumeattributesclass-protection-controller", null, null, "VolumeAttributesClass"),
            row("ttl-after-finished-controller", "ttl-after-finished", null),
            row("root-ca-certificate-publisher-controller", "root-ca-cert-publisher", "root-ca-cert-publisher"),
            row("kube-apiserver-serving-clustertrustbundle-publisher-controller", null,
                    "kube-apiserver-serving-clustertrustbundle-publisher", "ClusterTrustBundle"),
            row("ephemeral-volume-controller", "ephemeral-volume", null),
            row("storageversion-garbage-collector-controller", "storage-version-gc",
                    "storage-version-garbage-collector", "APIServerIdentity", "StorageVersionAPI"),
            row("resourceclaim-controller", "resource-claim-controller", "resource-claim-controller",
                    "DynamicResourceAllocation"),
            row("device-taint-eviction-controller", null, null, "DynamicResourceAllocation", "DRADeviceTaints"),
            row("legacy-serviceaccount-token-cleaner-controller", "legacy-service-account-token-cleaner",
                    "legacy-service-account-token-cleaner"),
            row("validatingadmissionpolicy-status-controller", null, null),
            row("taint-eviction-controller", null, "node-controller", "SeparateTaintEvictionController"),
            row("service-cidr-controller", null, "service-cidrs-controller", "MultiCIDRServiceAllocator"),
            row("storage-version-migrator-controller", "svm", null, "StorageVersionMigrator"),
            off(row("selinux-warning-controller", null, null, "SELinuxChangePolicy")));

    @Test
    void catalogIsUpstreamsTableInUpstreamsOrder() {
        assertThat(ControllerCatalog.descriptors().stream().map(Row::of).toList()).containsExactlyElementsOf(UPSTREAM);
        assertThat(ControllerCatalog.upstream().all()).containsExactlyElementsOf(ControllerCatalog.descriptors());
    }

    @Test
    void onlyTheTokenControllerRequiresSpecialHandling() {
        assertThat(ControllerCatalog.descriptors().stream().filter(ControllerDescriptor::requiresSpecialHandling)
                .map(ControllerDescriptor::name)).containsExactly("serviceaccount-token-controller");
    }

    @Test
    void qkcmsControllersAreImplementedAndThosePartialSaySo() {
        assertThat(ControllerCatalog.descriptors().stream().filter(ControllerDescriptor::implemented)
                .map(ControllerDescriptor::name)).containsExactlyInAnyOrder("serviceaccount-token-controller",
                        "endpoints-controller", "endpointslice-controller", "endpointslice-mirroring-controller",
                        "replicationcontroller-controller", "pod-garbage-collector-controller", "resourcequota-controller",
                        "namespace-controller",
                        "serviceaccount-controller", "garbage-collector-controller", "daemonset-controller",
                        "job-controller", "deployment-controller", "replicaset-controller", "statefulset-controller",
                        "cronjob-controller", "node-lifecycle-controller", "ttl-after-finished-controller",
                        "root-ca-certificate-publisher-controller", "legacy-serviceaccount-token-cleaner-controller",
                        "node-ipam-controller", "service-cidr-controller",
                        "bootstrap-signer-controller", "token-cleaner-controller", "clusterrole-aggregation-controller",
                        "disruption-controller",
                        "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
                        "ephemeral-volume-controller", "resourceclaim-controller",
                        "volumeattributesclass-protection-controller", "taint-eviction-controller", "ttl-controller",
                        "certificatesigningrequest-signing-controller", "certificatesigningrequest-approving-controller",
                        "certificatesigningrequest-cleaner-controller", "podcertificaterequest-cleaner-controller",
                        "kube-apiserver-serving-clustertrustbundle-publisher-controller",
                        "storageversion-garbage-collector-controller", "storage-version-migrator-controller",
                        "device-taint-eviction-controller", "selinux-warning-controller",
                        "persistentvolume-binder-controller", "validatingadmissionpolicy-status-controller",
                        "persistentvolume-attach-detach-controller", "persistentvolume-expander-controller",
                        "horizontal-pod-autoscaler-controller");
        assertThat(ControllerCatalog.upstream().partial()).containsOnlyKeys("device-taint-eviction-controller");
    }

    /**
     * An implemented descriptor is the {@code DESCRIPTOR} of a {@code <Name>Descriptor} class whose start function
     * it carries, in the package of the controller class that declares the same {@code NAME}.
     */
    @Test
    void everyImplementedDescriptorLivesInItsControllersPackage() throws Exception {
        for (ControllerDescriptor d : ControllerCatalog.descriptors()) {
            if (!d.implemented()) {
                continue;
            }
            // a method reference's class is defined beside the class that wrote it: the descriptor's own
            String starter = d.start().orElseThrow().getClass().getName();
            String owner = starter.substring(0, starter.indexOf("$$"));
            Class<?> descriptorClass = Class.forName(owner);
            assertThat(descriptorClass.getSimpleName()).as(d.name()).endsWith("ControllerDescriptor");
            Field field = descriptorClass.getField("DESCRIPTOR");
            assertThat(Modifier.isStatic(field.getModifiers()) && Modifier.isFinal(field.getModifiers())).isTrue();
            assertThat(field.get(null)).as(d.name()).isSameAs(d);

            String pkg = descriptorClass.getPackageName();
            assertThat(pkg).as(d.name()).startsWith("io.qkcm.controller.");
            Path dir = Path.of("src/main/java", pkg.replace('.', '/'));
            assertThat(controllersDeclaring(dir, d.name())).as("a controller of %s in %s", d.name(), pkg).isNotEmpty();
        }
    }

    /** The classes of {@code dir} (not its subpackages) that declare {@code NAME = "<name>"}. */
    private static List<Path> controllersDeclaring(Path dir, String name) throws IOException {
        String declaration = "String NAME = \"" + name + "\";";
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.toString().endsWith(".java") && !f.toString().endsWith("Descriptor.java"))
                    .filter(f -> {
                        try {
                            return Files.readString(f).contains(declaration);
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }).toList();
        }
    }

    /** Adding a controller touches one line of the list: no inline fully-qualified controller classes. */
    @Test
    void catalogNamesDescriptorsBySimpleName() throws IOException {
        String source = Files.readString(Path.of("src/main/java/io/qkcm/manager/ControllerCatalog.java"));
        assertThat(source.lines().filter(l -> !l.startsWith("import ")).filter(l -> l.contains("io.qkcm.controller.")))
                .isEmpty();
    }
}
