package io.qkcm.controller.volume.common;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.AWSElasticBlockStoreVolumeSource;
import io.fabric8.kubernetes.api.model.AzureDiskVolumeSource;
import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.CinderPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.CinderVolumeSource;
import io.fabric8.kubernetes.api.model.GCEPersistentDiskVolumeSource;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeNodeAffinity;
import io.qkcm.runtime.DeepCopy;

/**
 * Upstream's k8s.io/csi-translation-lib with pkg/volume/csimigration's PluginManager, for every volume
 * controller (binder, attach/detach, SELinux warning): the in-tree plugins aws-ebs, azure-disk, azure-file,
 * cinder, gce-pd, vsphere and portworx, their CSI drivers' names, and the translation of their
 * PersistentVolumes and pod inline volumes to PersistentVolumes with the CSI source of the driver.
 *
 * <p>The migration gates as v1.34 has them by default: migration is on for all seven (CSIMigrationPortworx is
 * GA, locked on); it is complete for all but portworx, whose InTreePluginPortworxUnregister is alpha and off,
 * so a portworx volume is translated for a node only when that node's CSINode says so (see
 * {@link #MIGRATED_PLUGINS_ANNOTATION}).
 */
public final class CSITranslation {

    public static final String AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs";
    public static final String AWS_EBS_DRIVER = "ebs.csi.aws.com";
    public static final String AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk";
    public static final String AZURE_DISK_DRIVER = "disk.csi.azure.com";
    public static final String GCE_PD_PLUGIN = "kubernetes.io/gce-pd";
    public static final String GCE_PD_DRIVER = "pd.csi.storage.gke.io";
    public static final String VSPHERE_PLUGIN = "kubernetes.io/vsphere-volume";
    public static final String VSPHERE_DRIVER = "csi.vsphere.vmware.com";
    public static final String AZURE_FILE_PLUGIN = "kubernetes.io/azure-file";
    public static final String AZURE_FILE_DRIVER = "file.csi.azure.com";
    private static final Pattern AZURE_SECRET_NAME = Pattern.compile("azure-storage-account-(.+)-secret");
    public static final String PORTWORX_PLUGIN = "kubernetes.io/portworx-volume";
    public static final String PORTWORX_DRIVER = "pxd.portworx.com";
    /** v1.MigratedPluginsAnnotationKey on a CSINode: the in-tree plugins migrated on that node, comma-separated. */
    public static final String MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins";
    public static final String CINDER_PLUGIN = "kubernetes.io/cinder";
    public static final String CINDER_DRIVER = "cinder.csi.openstack.org";
    public static final String LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone";
    public static final String LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region";
    public static final String LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone";
    public static final String LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region";
    private static final String MULTI_ZONE_DELIMITER = "__";
    private static final Pattern AWS_VOLUME_ID = Pattern.compile("^vol-[^/]*$");

    private CSITranslation() {
    }

    /** GetCSINameFromInTreeName; null for a name that is no migratable in-tree plugin's. */
    public static String csiNameFromInTreeName(String pluginName) {
        if (pluginName == null) {
            return null;
        }
        return switch (pluginName) {
            case AWS_EBS_PLUGIN -> AWS_EBS_DRIVER;
            case GCE_PD_PLUGIN -> GCE_PD_DRIVER;
            case AZURE_FILE_PLUGIN -> AZURE_FILE_DRIVER;
            case AZURE_DISK_PLUGIN -> AZURE_DISK_DRIVER;
            case CINDER_PLUGIN -> CINDER_DRIVER;
            case VSPHERE_PLUGIN -> VSPHERE_DRIVER;
            case PORTWORX_PLUGIN -> PORTWORX_DRIVER;
            default -> null;
        };
    }

    /** PluginManager.IsMigrationEnabledForPlugin with v1.34's gates: every translated plugin. */
    public static boolean isMigrationEnabledForPlugin(String pluginName) {
        return csiNameFromInTreeName(pluginName) != null;
    }

    /** PluginManager.IsMigrationCompleteForPlugin with v1.34's gates: all but portworx. */
    public static boolean isMigrationCompleteForPlugin(String pluginName) {
        return isMigrationEnabledForPlugin(pluginName) && !PORTWORX_PLUGIN.equals(pluginName);
    }

    /**
     * GetInTreePluginNameFromSpec: the in-tree plugin of a PersistentVolume (when {@code pv} is set) or of an
     * inline volume; null when none supports it.
     */
    public static String inTreePluginName(PersistentVolume pv, Volume volume) {
        if (pv != null) {
            var s = pv.getSpec();
            if (s == null) {
                return null;
            }
            return s.getAwsElasticBlockStore() != null ? AWS_EBS_PLUGIN
                    : s.getAzureDisk() != null ? AZURE_DISK_PLUGIN : s.getCinder() != null ? CINDER_PLUGIN
                            : s.getGcePersistentDisk() != null ? GCE_PD_PLUGIN
                                    : s.getVsphereVolume() != null ? VSPHERE_PLUGIN
                                            : s.getPortworxVolume() != null ? PORTWORX_PLUGIN
                                                    : s.getAzureFile() != null ? AZURE_FILE_PLUGIN : null;
        }
        if (volume == null) {
            return null;
        }
        return volume.getAwsElasticBlockStore() != null ? AWS_EBS_PLUGIN
                : volume.getAzureDisk() != null ? AZURE_DISK_PLUGIN : volume.getCinder() != null ? CINDER_PLUGIN
                        : volume.getGcePersistentDisk() != null ? GCE_PD_PLUGIN
                                : volume.getVsphereVolume() != null ? VSPHERE_PLUGIN
                                        : volume.getPortworxVolume() != null ? PORTWORX_PLUGIN
                                                : volume.getAzureFile() != null ? AZURE_FILE_PLUGIN : null;
    }

    /**
     * CSITranslator.TranslateInTreePVToCSI: a translated deep copy (the cached PV is untouched); an
     * IllegalArgumentException where upstream returns an error.
     */
    public static PersistentVolume translateInTreePVToCSI(PersistentVolume original) {
        PersistentVolume pv = DeepCopy.of(original);
        var s = pv.getSpec();
        if (s.getAwsElasticBlockStore() != null) {
            AWSElasticBlockStoreVolumeSource ebs = s.getAwsElasticBlockStore();
            CSIPersistentVolumeSource csi = csi(AWS_EBS_DRIVER, ebsVolumeID(ebs.getVolumeID()), ebs.getReadOnly(),
                    ebs.getFsType());
            csi.getVolumeAttributes().put("partition", Integer.toString(ebs.getPartition() == null ? 0 : ebs.getPartition()));
            translateTopology(pv, "topology." + AWS_EBS_DRIVER + "/zone");
            s.setAwsElasticBlockStore(null);
            s.setCsi(csi);
            return pv;
        }
        if (s.getAzureDisk() != null) {
            AzureDiskVolumeSource azure = s.getAzureDisk();
            CSIPersistentVolumeSource csi = new CSIPersistentVolumeSource();
            csi.setDriver(AZURE_DISK_DRIVER);
            csi.setVolumeHandle(azure.getDiskURI());
            csi.setVolumeAttributes(new LinkedHashMap<>(Map.of("kind", "Managed")));
            checkAzureKind(azure);
            if (azure.getCachingMode() != null) {
                csi.getVolumeAttributes().put("cachingmode", azure.getCachingMode());
            }
            if (azure.getFsType() != null) {
                csi.setFsType(azure.getFsType().isEmpty() ? null : azure.getFsType());
                csi.getVolumeAttributes().put("fstype", azure.getFsType());
            }
            if (Boolean.TRUE.equals(azure.getReadOnly())) {
                csi.setReadOnly(true);
            }
            s.setAzureDisk(null);
            s.setCsi(csi);
            return pv;
        }
        if (s.getCinder() != null) {
            CinderPersistentVolumeSource cinder = s.getCinder();
            CSIPersistentVolumeSource csi = csi(CINDER_DRIVER, cinder.getVolumeID(), cinder.getReadOnly(), cinder.getFsType());
            translateTopology(pv, "topology." + CINDER_DRIVER + "/zone");
            s.setCinder(null);
            s.setCsi(csi);
            return pv;
        }
        if (s.getGcePersistentDisk() != null) {
            GCEPersistentDiskVolumeSource gce = s.getGcePersistentDisk();
            Map<String, String> labels = pv.getMetadata().getLabels() == null ? Map.of() : pv.getMetadata().getLabels();
            String zonesLabel = labels.getOrDefault(LABEL_BETA_ZONE, "");
            if (zonesLabel.isEmpty()) {
                zonesLabel = labels.getOrDefault(LABEL_TOPOLOGY_ZONE, "");
            }
            String[] zones = zonesLabel.split(MULTI_ZONE_DELIMITER, -1);
            String pdName = nullToEmpty(gce.getPdName());
            String volID;
            if (zones.length == 1 && !zones[0].isEmpty()) {
                volID = "projects/UNSPECIFIED/zones/" + zones[0] + "/disks/" + pdName;
            } else if (zones.length > 1) {
                volID = "projects/UNSPECIFIED/regions/" + gceRegionFromZones(zones) + "/disks/" + pdName;
            } else {
                volID = "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/" + pdName;
            }
            CSIPersistentVolumeSource csi = csi(GCE_PD_DRIVER, volID, gce.getReadOnly(), gce.getFsType());
            csi.getVolumeAttributes().put("partition", gcePartition(gce.getPartition()));
            translateTopology(pv, "topology.gke.io/zone");
            s.setGcePersistentDisk(null);
            s.setCsi(csi);
            s.setAccessModes(backwardCompatibleAccessModes(s.getAccessModes()));
            return pv;
        }
        if (s.getVsphereVolume() != null) {
            var vsphere = s.getVsphereVolume();
            CSIPersistentVolumeSource csi = csi(VSPHERE_DRIVER, vsphere.getVolumePath(), null, vsphere.getFsType());
            if (vsphere.getStoragePolicyName() != null && !vsphere.getStoragePolicyName().isEmpty()) {
                csi.getVolumeAttributes().put("storagepolicyname", vsphere.getStoragePolicyName());
            }
            translateVsphereTopology(pv);
            s.setVsphereVolume(null);
            s.setCsi(csi);
            return pv;
        }
        if (s.getAzureFile() != null) {
            var azure = s.getAzureFile();
            String accountName = azureStorageAccountName(azure.getSecretName());
            Map<String, String> annotations = pv.getMetadata().getAnnotations();
            String resourceGroup = annotations == null ? ""
                    : annotations.getOrDefault("kubernetes.io/azure-file-resource-group", "");
            String namespace = azure.getSecretNamespace() != null ? azure.getSecretNamespace()
                    : s.getClaimRef() != null ? nullToEmpty(s.getClaimRef().getNamespace()) : "";
            if (namespace.isEmpty()) {
                throw new IllegalArgumentException("could not find a secret namespace in PersistentVolumeSource or ClaimRef");
            }
            String volumeID = String.join("#", resourceGroup, accountName, nullToEmpty(azure.getShareName()),
                    nullToEmpty(pv.getMetadata().getName()), namespace);
            CSIPersistentVolumeSource csi = csi(AZURE_FILE_DRIVER, volumeID, azure.getReadOnly(), null);
            csi.getVolumeAttributes().put("sharename", nullToEmpty(azure.getShareName()));
            csi.setNodeStageSecretRef(new io.fabric8.kubernetes.api.model.SecretReference(nullToEmpty(azure.getSecretName()),
                    namespace));
            s.setAzureFile(null);
            s.setCsi(csi);
            return pv;
        }
        if (s.getPortworxVolume() != null) {
            var px = s.getPortworxVolume();
            CSIPersistentVolumeSource csi = csi(PORTWORX_DRIVER, px.getVolumeID(), null, px.getFsType());
            Map<String, String> annotations = pv.getMetadata().getAnnotations();
            if (annotations != null && annotations.containsKey("openstorage.io/auth-secret-name")
                    && annotations.containsKey("openstorage.io/auth-secret-namespace")) {
                java.util.function.Supplier<io.fabric8.kubernetes.api.model.SecretReference> ref = () ->
                        new io.fabric8.kubernetes.api.model.SecretReference(annotations.get("openstorage.io/auth-secret-name"),
                                annotations.get("openstorage.io/auth-secret-namespace"));
                csi.setControllerPublishSecretRef(ref.get());
                csi.setNodeStageSecretRef(ref.get());
                csi.setNodePublishSecretRef(ref.get());
                csi.setControllerExpandSecretRef(ref.get());
                csi.setNodeExpandSecretRef(ref.get());
            }
            s.setPortworxVolume(null);
            s.setCsi(csi);
            return pv;
        }
        throw new IllegalArgumentException("could not find in-tree plugin translation logic for \"" + pv.getMetadata().getName() + "\"");
    }

    /**
     * CSITranslator.TranslateInTreeInlineVolumeToCSI: a PV named after driver and handle, Filesystem mode; an
     * IllegalArgumentException where upstream returns an error.
     */
    public static PersistentVolume translateInTreeInlineVolumeToCSI(Volume volume, String podNamespace) {
        String name;
        CSIPersistentVolumeSource csi;
        if (volume.getAwsElasticBlockStore() != null) {
            AWSElasticBlockStoreVolumeSource ebs = volume.getAwsElasticBlockStore();
            String handle = ebsVolumeID(ebs.getVolumeID());
            name = AWS_EBS_DRIVER + "-" + handle;
            csi = csi(AWS_EBS_DRIVER, handle, ebs.getReadOnly(), ebs.getFsType());
            csi.getVolumeAttributes().put("partition", Integer.toString(ebs.getPartition() == null ? 0 : ebs.getPartition()));
        } else if (volume.getAzureDisk() != null) {
            AzureDiskVolumeSource azure = volume.getAzureDisk();
            checkAzureKind(azure);
            name = azure.getDiskURI();
            csi = new CSIPersistentVolumeSource();
            csi.setDriver(AZURE_DISK_DRIVER);
            csi.setVolumeHandle(azure.getDiskURI());
            csi.setVolumeAttributes(new LinkedHashMap<>(Map.of("kind", "Managed")));
            if (Boolean.TRUE.equals(azure.getReadOnly())) {
                csi.setReadOnly(true);
            }
            if (azure.getCachingMode() != null && !azure.getCachingMode().isEmpty()) {
                csi.getVolumeAttributes().put("cachingmode", azure.getCachingMode());
            }
            if (azure.getFsType() != null) {
                csi.setFsType(azure.getFsType().isEmpty() ? null : azure.getFsType());
                csi.getVolumeAttributes().put("fstype", azure.getFsType());
            }
        } else if (volume.getGcePersistentDisk() != null) {
            GCEPersistentDiskVolumeSource gce = volume.getGcePersistentDisk();
            String pdName = nullToEmpty(gce.getPdName());
            csi = csi(GCE_PD_DRIVER, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/" + pdName, gce.getReadOnly(),
                    gce.getFsType());
            csi.getVolumeAttributes().put("partition", gcePartition(gce.getPartition()));
            // a read-only disk is ReadOnlyMany
            return new PersistentVolumeBuilder().withMetadata(new ObjectMetaBuilder().withName(GCE_PD_DRIVER + "-" + pdName)
                    .build()).withNewSpec().withCsi(csi)
                    .withAccessModes(Boolean.TRUE.equals(gce.getReadOnly()) ? "ReadOnlyMany" : "ReadWriteOnce")
                    .withVolumeMode("Filesystem").endSpec().build();
        } else if (volume.getVsphereVolume() != null) {
            var vsphere = volume.getVsphereVolume();
            if (vsphere.getStoragePolicyName() != null && !vsphere.getStoragePolicyName().isEmpty()) {
                // upstream reads the policy from the new PV's (nil) vsphere source here and panics; refused instead
                throw new IllegalArgumentException("inline vSphere volume with a storage policy name cannot be translated");
            }
            name = VSPHERE_DRIVER + "-" + nullToEmpty(vsphere.getVolumePath());
            csi = csi(VSPHERE_DRIVER, vsphere.getVolumePath(), null, vsphere.getFsType());
        } else if (volume.getAzureFile() != null) {
            var azure = volume.getAzureFile();
            String accountName = azureStorageAccountName(azure.getSecretName());
            String secretNamespace = podNamespace == null || podNamespace.isEmpty() ? "default" : podNamespace;
            String volumeID = String.join("#", "", accountName, nullToEmpty(azure.getShareName()),
                    nullToEmpty(volume.getName()), secretNamespace);
            csi = csi(AZURE_FILE_DRIVER, volumeID, azure.getReadOnly(), null);
            csi.getVolumeAttributes().put("sharename", nullToEmpty(azure.getShareName()));
            csi.setNodeStageSecretRef(new io.fabric8.kubernetes.api.model.SecretReference(nullToEmpty(azure.getSecretName()),
                    secretNamespace));
            return new PersistentVolumeBuilder().withMetadata(new ObjectMetaBuilder().withName(volumeID).build())
                    .withNewSpec().withCsi(csi).withAccessModes("ReadWriteMany").withVolumeMode("Filesystem").endSpec()
                    .build();
        } else if (volume.getPortworxVolume() != null) {
            var px = volume.getPortworxVolume();
            csi = csi(PORTWORX_DRIVER, px.getVolumeID(), null, px.getFsType());
            return new PersistentVolumeBuilder().withMetadata(new ObjectMetaBuilder()
                    .withName(PORTWORX_DRIVER + "-" + nullToEmpty(px.getVolumeID())).build()).withNewSpec().withCsi(csi)
                    .withAccessModes(Boolean.TRUE.equals(px.getReadOnly()) ? "ReadOnlyMany" : "ReadWriteOnce")
                    .withVolumeMode("Filesystem").endSpec().build();
        } else if (volume.getCinder() != null) {
            CinderVolumeSource cinder = volume.getCinder();
            name = CINDER_DRIVER + "-" + nullToEmpty(cinder.getVolumeID());
            csi = csi(CINDER_DRIVER, cinder.getVolumeID(), cinder.getReadOnly(), cinder.getFsType());
        } else {
            throw new IllegalArgumentException("could not find in-tree plugin translation logic for \"" + volume.getName() + "\"");
        }
        return new PersistentVolumeBuilder().withMetadata(new ObjectMetaBuilder().withName(name).build()).withNewSpec()
                .withCsi(csi).withAccessModes("ReadWriteOnce").withVolumeMode("Filesystem").endSpec().build();
    }

    /** getStorageAccountName: the account of an azure-storage-account-{account}-secret, else the secret's name. */
    private static String azureStorageAccountName(String secretName) {
        String name = nullToEmpty(secretName);
        java.util.regex.Matcher m = AZURE_SECRET_NAME.matcher(name);
        return m.find() ? m.group(1) : name;
    }

    private static String gcePartition(Integer partition) {
        return partition == null || partition == 0 ? "" : Integer.toString(partition);
    }

    /** gceGetRegionFromZones: the one {locale}-{region} of zones of the form {locale}-{region}-{zone}. */
    private static String gceRegionFromZones(String[] zones) {
        TreeSet<String> regions = new TreeSet<>();
        for (String zone : zones) {
            String[] split = zone.split("-", -1);
            if (split.length != 3) {
                throw new IllegalArgumentException("failed to get region from zones: zone in unexpected format, expected: "
                        + "{locale}-{region}-{zone}, got: " + zone);
            }
            regions.add(split[0] + "-" + split[1]);
        }
        if (regions.size() != 1) {
            throw new IllegalArgumentException("failed to get region from zones: multiple or no regions gotten from zones, got: "
                    + regions);
        }
        return regions.first();
    }

    /** backwardCompatibleAccessModes: ReadWriteMany counts as ReadWriteOnce; one mode results. */
    private static List<String> backwardCompatibleAccessModes(List<String> modes) {
        if (modes == null) {
            return null;
        }
        java.util.Set<String> s = new java.util.HashSet<>();
        for (String m : modes) {
            s.add("ReadWriteMany".equals(m) ? "ReadWriteOnce" : m);
        }
        if (s.contains("ReadWriteOnce")) {
            return new ArrayList<>(List.of("ReadWriteOnce"));
        }
        if (s.contains("ReadOnlyMany")) {
            return new ArrayList<>(List.of("ReadOnlyMany"));
        }
        return new ArrayList<>(List.of("ReadWriteOnce"));
    }

    private static void checkAzureKind(AzureDiskVolumeSource azure) {
        if (azure.getKind() != null && !azure.getKind().equalsIgnoreCase("Managed")) {
            throw new IllegalArgumentException("kind(" + azure.getKind() + ") is not supported in csi migration");
        }
    }

    private static CSIPersistentVolumeSource csi(String driver, String handle, Boolean readOnly, String fsType) {
        CSIPersistentVolumeSource csi = new CSIPersistentVolumeSource();
        csi.setDriver(driver);
        csi.setVolumeHandle(nullToEmpty(handle));
        csi.setReadOnly(Boolean.TRUE.equals(readOnly) ? Boolean.TRUE : null);
        csi.setFsType(fsType == null || fsType.isEmpty() ? null : fsType);
        csi.setVolumeAttributes(new LinkedHashMap<>());
        return csi;
    }

    /** KubernetesVolumeIDToEBSVolumeID: {@code aws://<zone>/<vol-id>} or a bare id. */
    private static String ebsVolumeID(String kubernetesID) {
        String id = nullToEmpty(kubernetesID);
        if (!id.startsWith("aws://")) {
            return id;
        }
        java.net.URI uri;
        try {
            uri = new java.net.URI(id);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("failed to translate Kubernetes ID to EBS Volume ID Invalid disk name (" + id
                    + "): " + e.getMessage());
        }
        String awsID = uri.getRawPath() == null ? "" : uri.getRawPath();
        awsID = awsID.replaceAll("^/+", "").replaceAll("/+$", "");
        if (!AWS_VOLUME_ID.matcher(awsID).matches()) {
            throw new IllegalArgumentException("failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ("
                    + id + ")");
        }
        return awsID;
    }

    /** translateTopologyFromInTreeToCSI: the zone key of node affinity (or the zone label) becomes the driver's. */
    private static void translateTopology(PersistentVolume pv, String csiTopologyKey) {
        String[] labels = topologyLabels(pv);
        String zoneLabel = labels[0];
        String regionLabel = labels[1];
        List<String> zones = topologyValues(pv, zoneLabel);
        if (!zones.isEmpty()) {
            replaceTopology(pv, zoneLabel, csiTopologyKey);
        } else {
            Map<String, String> pvLabels = pv.getMetadata().getLabels();
            if (pvLabels != null && pvLabels.containsKey(zoneLabel)) {
                List<String> split = List.of(pvLabels.get(zoneLabel).split(MULTI_ZONE_DELIMITER, -1));
                addTopology(pv, csiTopologyKey, split);
            }
        }
        if (LABEL_BETA_REGION.equals(regionLabel) && !topologyValues(pv, regionLabel).isEmpty()) {
            replaceTopology(pv, regionLabel, LABEL_TOPOLOGY_REGION);
        }
    }

    /** translateTopologyFromInTreevSphereToCSI: zone and region keys (or labels) become the driver's. */
    private static void translateVsphereTopology(PersistentVolume pv) {
        String[] labels = topologyLabels(pv);
        Map<String, String> pvLabels = pv.getMetadata().getLabels() == null ? Map.of() : pv.getMetadata().getLabels();
        String[][] keys = { { labels[0], "topology.csi.vmware.com/zone" }, { labels[1], "topology.csi.vmware.com/region" } };
        for (String[] k : keys) {
            if (!topologyValues(pv, k[0]).isEmpty()) {
                replaceTopology(pv, k[0], k[1]);
            } else if (pvLabels.containsKey(k[0]) && !pvLabels.get(k[0]).isEmpty()) {
                addTopology(pv, k[1], List.of(pvLabels.get(k[0])));
            }
        }
    }

    private static String[] topologyLabels(PersistentVolume pv) {
        VolumeNodeAffinity affinity = pv.getSpec().getNodeAffinity();
        if (topologyKeyExists(LABEL_TOPOLOGY_ZONE, affinity)) {
            return new String[] { LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION };
        }
        if (topologyKeyExists(LABEL_BETA_ZONE, affinity)) {
            return new String[] { LABEL_BETA_ZONE, LABEL_BETA_REGION };
        }
        Map<String, String> labels = pv.getMetadata().getLabels();
        if (labels != null && labels.containsKey(LABEL_TOPOLOGY_ZONE)) {
            return new String[] { LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION };
        }
        if (labels != null && labels.containsKey(LABEL_BETA_ZONE)) {
            return new String[] { LABEL_BETA_ZONE, LABEL_BETA_REGION };
        }
        return new String[] { LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION };
    }

    private static List<NodeSelectorTerm> terms(PersistentVolume pv) {
        VolumeNodeAffinity a = pv.getSpec().getNodeAffinity();
        if (a == null || a.getRequired() == null || a.getRequired().getNodeSelectorTerms() == null) {
            return List.of();
        }
        return a.getRequired().getNodeSelectorTerms();
    }

    private static boolean topologyKeyExists(String key, VolumeNodeAffinity a) {
        if (a == null || a.getRequired() == null || a.getRequired().getNodeSelectorTerms() == null) {
            return false;
        }
        for (NodeSelectorTerm t : a.getRequired().getNodeSelectorTerms()) {
            if (t.getMatchExpressions() != null && t.getMatchExpressions().stream().anyMatch(r -> key.equals(r.getKey()))) {
                return true;
            }
        }
        return false;
    }

    private static List<String> topologyValues(PersistentVolume pv, String key) {
        TreeSet<String> values = new TreeSet<>();
        for (NodeSelectorTerm t : terms(pv)) {
            if (t.getMatchExpressions() != null) {
                for (NodeSelectorRequirement r : t.getMatchExpressions()) {
                    if (key.equals(r.getKey()) && r.getValues() != null) {
                        values.addAll(r.getValues());
                    }
                }
            }
        }
        return new ArrayList<>(values);
    }

    private static void replaceTopology(PersistentVolume pv, String oldKey, String newKey) {
        for (NodeSelectorTerm t : terms(pv)) {
            if (t.getMatchExpressions() != null) {
                for (NodeSelectorRequirement r : t.getMatchExpressions()) {
                    if (oldKey.equals(r.getKey())) {
                        r.setKey(newKey);
                    }
                }
            }
        }
    }

    /** addTopology: the trimmed non-empty zones, sorted and distinct, as an In requirement of every term. */
    private static void addTopology(PersistentVolume pv, String key, List<String> zones) {
        TreeSet<String> filtered = new TreeSet<>();
        for (String z : zones) {
            if (!z.trim().isEmpty()) {
                filtered.add(z.trim());
            }
        }
        if (filtered.isEmpty()) {
            return; // upstream returns an error the caller ignores
        }
        var spec = pv.getSpec();
        if (spec.getNodeAffinity() == null) {
            spec.setNodeAffinity(new VolumeNodeAffinity());
        }
        if (spec.getNodeAffinity().getRequired() == null) {
            spec.getNodeAffinity().setRequired(new NodeSelector());
        }
        NodeSelector required = spec.getNodeAffinity().getRequired();
        if (required.getNodeSelectorTerms() == null || required.getNodeSelectorTerms().isEmpty()) {
            required.setNodeSelectorTerms(new ArrayList<>(List.of(new NodeSelectorTerm())));
        }
        for (NodeSelectorTerm t : required.getNodeSelectorTerms()) {
            List<NodeSelectorRequirement> exprs = t.getMatchExpressions() == null ? new ArrayList<>()
                    : new ArrayList<>(t.getMatchExpressions());
            exprs.add(new NodeSelectorRequirement(key, "In", new ArrayList<>(filtered)));
            t.setMatchExpressions(exprs);
        }
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
