package io.qkcm.manager;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.qkcm.controller.bootstrap.BootstrapSignerControllerDescriptor;
import io.qkcm.controller.bootstrap.TokenCleanerControllerDescriptor;
import io.qkcm.controller.certificates.approver.CertificateSigningRequestApprovingControllerDescriptor;
import io.qkcm.controller.certificates.cleaner.CertificateSigningRequestCleanerControllerDescriptor;
import io.qkcm.controller.certificates.cleaner.PodCertificateRequestCleanerControllerDescriptor;
import io.qkcm.controller.certificates.clustertrustbundlepublisher.KubeAPIServerClusterTrustBundlePublisherControllerDescriptor;
import io.qkcm.controller.certificates.rootcacertpublisher.RootCACertificatePublisherControllerDescriptor;
import io.qkcm.controller.certificates.signer.CertificateSigningRequestSigningControllerDescriptor;
import io.qkcm.controller.clusterroleaggregation.ClusterRoleAggregationControllerDescriptor;
import io.qkcm.controller.cronjob.CronJobControllerDescriptor;
import io.qkcm.controller.daemon.DaemonSetControllerDescriptor;
import io.qkcm.controller.devicetainteviction.DeviceTaintEvictionControllerDescriptor;
import io.qkcm.controller.disruption.DisruptionControllerDescriptor;
import io.qkcm.controller.deployment.DeploymentControllerDescriptor;
import io.qkcm.controller.endpoint.EndpointsControllerDescriptor;
import io.qkcm.controller.endpointslice.EndpointSliceControllerDescriptor;
import io.qkcm.controller.endpointslicemirroring.EndpointSliceMirroringControllerDescriptor;
import io.qkcm.controller.garbagecollector.GarbageCollectorControllerDescriptor;
import io.qkcm.controller.job.JobControllerDescriptor;
import io.qkcm.controller.namespace.NamespaceControllerDescriptor;
import io.qkcm.controller.nodeipam.NodeIpamControllerDescriptor;
import io.qkcm.controller.nodelifecycle.NodeLifecycleControllerDescriptor;
import io.qkcm.controller.podautoscaler.HorizontalPodAutoscalerControllerDescriptor;
import io.qkcm.controller.podgc.PodGarbageCollectorControllerDescriptor;
import io.qkcm.controller.replicaset.ReplicaSetControllerDescriptor;
import io.qkcm.controller.replicaset.ReplicationControllerDescriptor;
import io.qkcm.controller.resourcequota.ResourceQuotaControllerDescriptor;
import io.qkcm.controller.resourceclaim.ResourceClaimControllerDescriptor;
import io.qkcm.controller.serviceaccount.LegacyServiceAccountTokenCleanerControllerDescriptor;
import io.qkcm.controller.serviceaccount.ServiceAccountControllerDescriptor;
import io.qkcm.controller.serviceaccount.ServiceAccountTokenControllerDescriptor;
import io.qkcm.controller.servicecidrs.ServiceCIDRsControllerDescriptor;
import io.qkcm.controller.statefulset.StatefulSetControllerDescriptor;
import io.qkcm.controller.storageversiongc.StorageVersionGarbageCollectorControllerDescriptor;
import io.qkcm.controller.storageversionmigrator.StorageVersionMigratorControllerDescriptor;
import io.qkcm.controller.tainteviction.TaintEvictionControllerDescriptor;
import io.qkcm.controller.ttl.TTLControllerDescriptor;
import io.qkcm.controller.ttlafterfinished.TTLAfterFinishedControllerDescriptor;
import io.qkcm.controller.validatingadmissionpolicystatus.ValidatingAdmissionPolicyStatusControllerDescriptor;
import io.qkcm.controller.volume.attachdetach.AttachDetachControllerDescriptor;
import io.qkcm.controller.volume.ephemeral.EphemeralVolumeControllerDescriptor;
import io.qkcm.controller.volume.expand.ExpandControllerDescriptor;
import io.qkcm.controller.volume.persistentvolume.PersistentVolumeBinderControllerDescriptor;
import io.qkcm.controller.volume.pvcprotection.PersistentVolumeClaimProtectionControllerDescriptor;
import io.qkcm.controller.volume.pvprotection.PersistentVolumeProtectionControllerDescriptor;
import io.qkcm.controller.volume.selinuxwarning.SELinuxWarningControllerDescriptor;
import io.qkcm.controller.volume.vacprotection.VolumeAttributesClassProtectionControllerDescriptor;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * Upstream's controller table (cmd/kube-controller-manager NewControllerDescriptors, v1.34) in upstream's
 * registration order: a controller qkcm implements is its own package's {@code DESCRIPTOR}; one it does not yet
 * is described here, with upstream's aliases, client name, gates and defaults, and is reported at startup.
 * Adding a controller replaces its line here with its package's descriptor.
 */
public final class ControllerCatalog {

    /** Every upstream controller, in upstream's order. */
    public static List<ControllerDescriptor> descriptors() {
        return List.of(
                // serviceaccount-token-controller is "special" upstream: started before all others.
                ServiceAccountTokenControllerDescriptor.DESCRIPTOR,
                EndpointsControllerDescriptor.DESCRIPTOR,
                EndpointSliceControllerDescriptor.DESCRIPTOR,
                EndpointSliceMirroringControllerDescriptor.DESCRIPTOR,
                ReplicationControllerDescriptor.DESCRIPTOR,
                PodGarbageCollectorControllerDescriptor.DESCRIPTOR,
                ResourceQuotaControllerDescriptor.DESCRIPTOR,
                NamespaceControllerDescriptor.DESCRIPTOR,
                ServiceAccountControllerDescriptor.DESCRIPTOR,
                GarbageCollectorControllerDescriptor.DESCRIPTOR,
                DaemonSetControllerDescriptor.DESCRIPTOR,
                JobControllerDescriptor.DESCRIPTOR,
                DeploymentControllerDescriptor.DESCRIPTOR,
                ReplicaSetControllerDescriptor.DESCRIPTOR,
                HorizontalPodAutoscalerControllerDescriptor.DESCRIPTOR,
                DisruptionControllerDescriptor.DESCRIPTOR,
                StatefulSetControllerDescriptor.DESCRIPTOR,
                CronJobControllerDescriptor.DESCRIPTOR,
                CertificateSigningRequestSigningControllerDescriptor.DESCRIPTOR,
                CertificateSigningRequestApprovingControllerDescriptor.DESCRIPTOR,
                CertificateSigningRequestCleanerControllerDescriptor.DESCRIPTOR,
                PodCertificateRequestCleanerControllerDescriptor.DESCRIPTOR,
                TTLControllerDescriptor.DESCRIPTOR,
                BootstrapSignerControllerDescriptor.DESCRIPTOR,
                TokenCleanerControllerDescriptor.DESCRIPTOR,
                NodeIpamControllerDescriptor.DESCRIPTOR,
                NodeLifecycleControllerDescriptor.DESCRIPTOR,
                ControllerDescriptor.of("service-lb-controller").withAliases("service").requiringCloudProvider(),
                ControllerDescriptor.of("node-route-controller").withAliases("route").requiringCloudProvider(),
                ControllerDescriptor.of("cloud-node-lifecycle-controller").withAliases("cloud-node-lifecycle")
                        .requiringCloudProvider(),
                PersistentVolumeBinderControllerDescriptor.DESCRIPTOR,
                AttachDetachControllerDescriptor.DESCRIPTOR,
                ExpandControllerDescriptor.DESCRIPTOR,
                ClusterRoleAggregationControllerDescriptor.DESCRIPTOR,
                PersistentVolumeClaimProtectionControllerDescriptor.DESCRIPTOR,
                PersistentVolumeProtectionControllerDescriptor.DESCRIPTOR,
                VolumeAttributesClassProtectionControllerDescriptor.DESCRIPTOR,
                TTLAfterFinishedControllerDescriptor.DESCRIPTOR,
                RootCACertificatePublisherControllerDescriptor.DESCRIPTOR,
                KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.DESCRIPTOR,
                EphemeralVolumeControllerDescriptor.DESCRIPTOR,
                StorageVersionGarbageCollectorControllerDescriptor.DESCRIPTOR,
                ResourceClaimControllerDescriptor.DESCRIPTOR,
                DeviceTaintEvictionControllerDescriptor.DESCRIPTOR,
                LegacyServiceAccountTokenCleanerControllerDescriptor.DESCRIPTOR,
                ValidatingAdmissionPolicyStatusControllerDescriptor.DESCRIPTOR,
                TaintEvictionControllerDescriptor.DESCRIPTOR,
                ServiceCIDRsControllerDescriptor.DESCRIPTOR,
                StorageVersionMigratorControllerDescriptor.DESCRIPTOR,
                SELinuxWarningControllerDescriptor.DESCRIPTOR);
    }

    private final Map<String, ControllerDescriptor> byName = new LinkedHashMap<>();
    private final Map<String, String> aliasToName = new LinkedHashMap<>();

    private ControllerCatalog(List<ControllerDescriptor> descriptors) {
        for (ControllerDescriptor d : descriptors) {
            if (byName.putIfAbsent(d.name(), d) != null) {
                // upstream panics on the same name registered twice
                throw new IllegalArgumentException("controller name " + d.name() + " was registered twice");
            }
            for (String alias : d.aliases()) {
                aliasToName.put(alias, d.name());
            }
        }
    }

    /** Upstream's table with qkcm's implementations. */
    public static ControllerCatalog upstream() {
        return new ControllerCatalog(descriptors());
    }

    /** A catalog of exactly these descriptors, in this order. */
    public static ControllerCatalog of(List<ControllerDescriptor> descriptors) {
        return new ControllerCatalog(descriptors);
    }

    /**
     * Builds an upstream controller with {@code starter} instead (a {@link ControllerImplementation}: test
     * probes run under an upstream name); its name, client, gates and defaults stay upstream's.
     */
    public ControllerCatalog implement(String name, ControllerDescriptor.Starter starter) {
        ControllerDescriptor known = byName.get(name);
        if (known == null) {
            throw new IllegalArgumentException("not an upstream controller: " + name);
        }
        byName.put(name, known.startedBy(starter));
        return this;
    }

    /** The partially implemented controllers and what each lacks. */
    public Map<String, String> partial() {
        Map<String, String> out = new LinkedHashMap<>();
        byName.values().forEach(d -> d.partial().ifPresent(p -> out.put(d.name(), p)));
        return out;
    }

    /** In upstream's order. */
    public List<ControllerDescriptor> all() {
        return List.copyOf(byName.values());
    }

    public Optional<ControllerDescriptor> byName(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The canonical name for a name or an old alias, if either is known. */
    public Optional<String> canonical(String nameOrAlias) {
        if (byName.containsKey(nameOrAlias)) {
            return Optional.of(nameOrAlias);
        }
        return Optional.ofNullable(aliasToName.get(nameOrAlias));
    }

    /** Sorted, as upstream's --controllers help and error list them. */
    public List<String> names() {
        List<String> names = new ArrayList<>(byName.keySet());
        Collections.sort(names);
        return names;
    }

    public List<String> disabledByDefault() {
        return byName.values().stream().filter(ControllerDescriptor::disabledByDefault).map(ControllerDescriptor::name)
                .sorted().toList();
    }
}
