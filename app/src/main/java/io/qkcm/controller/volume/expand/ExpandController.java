package io.qkcm.controller.volume.expand;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * persistentvolume-expander-controller (upstream pkg/controller/volume/expand): for a bound claim asking
 * for more storage than its status.capacity, it hands the resize to an external resizer. A PV of an
 * in-tree plugin migrated to CSI gets the CSI driver's name in the claim's
 * {@code volume.kubernetes.io/storage-resizer} annotation (the external-resizer of that driver acts on
 * it) and an ExternalExpanding event; any other volume (CSI ones included: their external-resizer
 * needs no annotation) gets the event "waiting for an external controller to expand this PVC" — FlexVolume
 * PVs too: upstream's expand controller has no dynamic plugin prober, so no flex driver is ever its plugin.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ExpandController extends KeyReconciler<PersistentVolumeClaim> {

    public static final String NAME = "persistentvolume-expander-controller";
    public static final String QUEUE = "volume_expand";
    /** The events' source component. */
    public static final String COMPONENT = "volume_expand";
    /** volumetypes.VolumeResizerKey. */
    public static final String VOLUME_RESIZER_KEY = "volume.kubernetes.io/storage-resizer";
    /** util.AnnPreResizeCapacity. */
    public static final String ANN_PRE_RESIZE_CAPACITY = "volume.alpha.kubernetes.io/pre-resize-capacity";
    /** kubelet events.ExternalExpanding. */
    public static final String EXTERNAL_EXPANDING = "ExternalExpanding";
    /** Upstream's defaultWorkerCount. */
    public static final int DEFAULT_WORKER_COUNT = 10;

    /** csi-translation-lib's in-tree plugins, all migrated in v1.34: in-tree plugin name → CSI driver name. */
    static final Map<String, String> MIGRATED_PLUGINS = Map.of(
            "kubernetes.io/aws-ebs", "ebs.csi.aws.com",
            "kubernetes.io/gce-pd", "pd.csi.storage.gke.io",
            "kubernetes.io/azure-disk", "disk.csi.azure.com",
            "kubernetes.io/azure-file", "file.csi.azure.com",
            "kubernetes.io/cinder", "cinder.csi.openstack.org",
            "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com",
            "kubernetes.io/portworx-volume", "pxd.portworx.com");

    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;
    private final EventRecorder recorder;

    public ExpandController(ControllerContext context, int workers) {
        super(context, PersistentVolumeClaim.class, QUEUE, workers);
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        this.recorder = context.recorderFor(COMPONENT);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pvcs);
    }

    /** Upstream's enqueuePVC: only bound claims. */
    @Override
    protected OnAddFilter<? super PersistentVolumeClaim> primaryAddFilter() {
        return ExpandController::isBound;
    }

    /** Upstream's update handler: the request or the capacity grew (and the claim is bound). */
    @Override
    protected OnUpdateFilter<? super PersistentVolumeClaim> primaryUpdateFilter() {
        return (cur, old) -> isBound(cur) && (compare(request(cur), request(old)) > 0
                || compare(capacity(cur), capacity(old)) > 0);
    }

    static boolean isBound(PersistentVolumeClaim pvc) {
        return pvc.getStatus() != null && "Bound".equals(pvc.getStatus().getPhase());
    }

    static Quantity request(PersistentVolumeClaim pvc) {
        return pvc.getSpec() == null || pvc.getSpec().getResources() == null
                || pvc.getSpec().getResources().getRequests() == null ? null
                        : pvc.getSpec().getResources().getRequests().get("storage");
    }

    static Quantity capacity(PersistentVolumeClaim pvc) {
        return pvc.getStatus() == null || pvc.getStatus().getCapacity() == null ? null
                : pvc.getStatus().getCapacity().get("storage");
    }

    /** resource.Quantity's Cmp, a missing quantity being zero. */
    static int compare(Quantity a, Quantity b) {
        BigDecimal x = a == null ? BigDecimal.ZERO : a.getNumericalAmount();
        BigDecimal y = b == null ? BigDecimal.ZERO : b.getNumericalAmount();
        return x.compareTo(y);
    }

    @Override
    public void onStart() {
        log.info("Starting expand controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down expand controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("%s failed with : %s", key, shortMessage(e));
    }

    /** Upstream's syncHandler. */
    @Override
    protected void sync(String key) {
        PersistentVolumeClaim pvc = pvcs.getStore().getByKey(key);
        if (pvc == null) {
            return;
        }
        String volumeName = pvc.getSpec() == null || pvc.getSpec().getVolumeName() == null ? ""
                : pvc.getSpec().getVolumeName();
        PersistentVolume pv;
        try {
            // a live read, as upstream (its PV is not cached by this controller)
            pv = volumeName.isEmpty() ? null : context.client().persistentVolumes().withName(volumeName).get();
        } catch (RuntimeException e) {
            throw new IllegalStateException("failed to get PV \"" + volumeName + "\": " + ApiErrors.message(e), e);
        }
        if (pv == null) {
            throw new IllegalStateException("failed to get PV \"" + volumeName + "\": persistentvolumes \"" + volumeName
                    + "\" not found");
        }
        var claimRef = pv.getSpec() == null ? null : pv.getSpec().getClaimRef();
        if (claimRef == null || !pvc.getMetadata().getNamespace().equals(claimRef.getNamespace())
                || !pvc.getMetadata().getUid().equals(claimRef.getUid())) {
            throw new IllegalStateException("persistent Volume is not bound to PVC being updated : " + key);
        }
        boolean preResize = pv.getMetadata().getAnnotations() != null
                && pv.getMetadata().getAnnotations().containsKey(ANN_PRE_RESIZE_CAPACITY);
        if (compare(request(pvc), capacity(pvc)) <= 0 && !preResize) {
            return;
        }
        String inTreePluginName = inTreePluginName(pv.getSpec());
        if (inTreePluginName != null) {
            recorder.event(pvc, EventRecorder.NORMAL, EXTERNAL_EXPANDING, "CSI migration enabled for " + inTreePluginName
                    + "; waiting for external resizer to expand the pvc");
            String csiResizerName = MIGRATED_PLUGINS.get(inTreePluginName);
            try {
                setClaimResizer(pvc, csiResizerName);
            } catch (RuntimeException e) {
                String errorMsg = "error setting resizer annotation to pvc " + key + ", with error patchPVCStatus failed to patch PVC \""
                        + pvc.getMetadata().getName() + "\": " + ApiErrors.message(e);
                recorder.event(pvc, EventRecorder.WARNING, EXTERNAL_EXPANDING, errorMsg);
                throw new IllegalStateException(errorMsg, e);
            }
            return;
        }
        // FindExpandablePluginBySpec finds none: of ProbeExpandableVolumePlugins only portworx expands, and it is
        // migrated (above); FlexVolume drivers are not probed here (InitPlugins with a nil prober)
        recorder.event(pvc, EventRecorder.NORMAL, EXTERNAL_EXPANDING, "waiting for an external controller to expand this PVC");
        log.infof("Waiting for an external controller to expand the PVC: pvcKey %s pvcUID %s", key, pvc.getMetadata().getUid());
    }

    /** csi-translation-lib's GetInTreePluginNameFromSpec for a PV (every such plugin is migrated in v1.34). */
    static String inTreePluginName(PersistentVolumeSpec spec) {
        if (spec == null) {
            return null;
        }
        if (spec.getAwsElasticBlockStore() != null) {
            return "kubernetes.io/aws-ebs";
        }
        if (spec.getGcePersistentDisk() != null) {
            return "kubernetes.io/gce-pd";
        }
        if (spec.getAzureDisk() != null) {
            return "kubernetes.io/azure-disk";
        }
        if (spec.getAzureFile() != null) {
            return "kubernetes.io/azure-file";
        }
        if (spec.getCinder() != null) {
            return "kubernetes.io/cinder";
        }
        if (spec.getVsphereVolume() != null) {
            return "kubernetes.io/vsphere-volume";
        }
        if (spec.getPortworxVolume() != null) {
            return "kubernetes.io/portworx-volume";
        }
        return null;
    }

    /**
     * util.SetClaimResizer: PatchPVCStatus of the annotation (a strategic merge patch of the status
     * subresource carrying the claim's resourceVersion); nothing when it already names the resizer (an
     * empty patch, which upstream still sends, changes nothing).
     */
    private void setClaimResizer(PersistentVolumeClaim pvc, String resizerName) {
        Map<String, String> annotations = pvc.getMetadata().getAnnotations();
        if (annotations != null && resizerName.equals(annotations.get(VOLUME_RESIZER_KEY))) {
            return;
        }
        MetaNamespaceKey k = MetaNamespaceKey.split(key(pvc));
        context.client().persistentVolumeClaims().inNamespace(k.namespace()).withName(k.name()).subresource("status")
                .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), resizerPatch(pvc, resizerName));
    }

    static String resizerPatch(PersistentVolumeClaim pvc, String resizerName) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("annotations", Map.of(VOLUME_RESIZER_KEY, resizerName));
        metadata.put("resourceVersion", pvc.getMetadata().getResourceVersion());
        try {
            return Json.mapper().writeValueAsString(Map.of("metadata", metadata));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The cached claim (tests). */
    PersistentVolumeClaim cachedClaim(String key) {
        return pvcs.getStore().getByKey(key);
    }
}
