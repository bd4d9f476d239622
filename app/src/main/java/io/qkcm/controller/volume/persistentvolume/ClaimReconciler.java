package io.qkcm.controller.volume.persistentvolume;

import java.util.List;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/** The PV binder's claim worker (upstream's {@code claims} queue); see {@link PersistentVolumeController}. */
@Ignore // runs in the binder's Operator
public final class ClaimReconciler extends KeyReconciler<PersistentVolumeClaim> {

    public static final String QUEUE = "claims";

    private final PersistentVolumeBinder binder;
    private final List<SharedIndexInformer<?>> informers;

    ClaimReconciler(ControllerContext context, PersistentVolumeBinder binder, List<SharedIndexInformer<?>> informers) {
        super(context, PersistentVolumeClaim.class, QUEUE, 1);
        this.binder = binder;
        this.informers = informers;
    }

    void enqueue(String key) {
        queue.add(key);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return informers;
    }

    @Override
    protected void sync(String key) {
        try {
            binder.claimWorker(key);
        } catch (Exception e) {
            PersistentVolumeController.logSyncError(log, "claim", key, e);
        }
    }
}
