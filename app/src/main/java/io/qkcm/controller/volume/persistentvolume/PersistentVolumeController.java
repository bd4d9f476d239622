package io.qkcm.controller.volume.persistentvolume;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * persistentvolume-binder-controller (upstream pkg/controller/volume/persistentvolume): this
 * reconciler is upstream's volume worker (queue {@code volumes}); {@link ClaimReconciler}, in the same
 * Operator, its claim worker (queue {@code claims}). Both queue every add, update and delete of their
 * objects (JOSDK's primary events), and the binder queues the other side where upstream does. Every
 * {@code --pvclaimbinder-sync-period} all claims and volumes are queued again (upstream's resync).
 *
 * <p>Upstream's workers never requeue a failed key: the error is logged and the next event or resync
 * tries again. The syncs here do the same, so a claim no volume can satisfy is looked at once per
 * resync and never in a loop.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class PersistentVolumeController extends KeyReconciler<PersistentVolume> {

    public static final String NAME = "persistentvolume-binder-controller";
    public static final String QUEUE = "volumes";

    final PersistentVolumeBinder binder;
    private final ClaimReconciler claimReconciler;
    private final Duration syncPeriod;
    private final Operations operations;
    private volatile ExecutorService operationPool;
    private final List<SharedIndexInformer<?>> informers;
    private volatile ScheduledFuture<?> resync;
    private volatile ScheduledFuture<?> metricsRefresh;

    public PersistentVolumeController(ControllerContext context, Duration syncPeriod, boolean enableDynamicProvisioning,
            InTreePlugins plugins) {
        super(context, PersistentVolume.class, QUEUE, 1);
        this.syncPeriod = syncPeriod;
        SharedIndexInformer<PersistentVolume> volumes = context.informers().informerFor(PersistentVolume.class);
        SharedIndexInformer<PersistentVolumeClaim> claims = context.informers().informerFor(PersistentVolumeClaim.class);
        SharedIndexInformer<StorageClass> classes = context.informers().informerFor(StorageClass.class);
        SharedIndexInformer<Pod> pods = context.informers().informerFor(Pod.class);
        SharedIndexInformer<Node> nodes = context.informers().informerFor(Node.class);
        this.informers = List.of(volumes, claims, classes, pods, nodes);
        // upstream's goroutines for provisioning, deletion and recycling: ready before the Operator's first
        // syncs, shut down when the controller stops and made anew if it starts again
        this.operationPool = context.newApiCallPool("persistentvolume-operations", 10);
        this.operations = new Operations(operationPool, System::nanoTime);
        this.binder = new PersistentVolumeBinder(context.client(), context.recorderFor(PersistentVolumeBinder.EVENT_SOURCE),
                volumes, claims, classes, pods, nodes, operations, plugins,
                new BinderMetrics(context.metrics(), System::nanoTime), enableDynamicProvisioning, context.options().featureGates().enabled("VolumeAttributesClass"));
        this.claimReconciler = new ClaimReconciler(context, binder, informers);
        binder.setQueues(new PersistentVolumeBinder.Queues() {
            @Override
            public void addClaim(String key) {
                claimReconciler.enqueue(key);
            }

            @Override
            public void addVolume(String name) {
                queue.add(name);
            }
        });
    }

    /** The claim worker, operated beside this reconciler. */
    public ClaimReconciler claimReconciler() {
        return claimReconciler;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return informers;
    }

    @Override
    public void onStart() {
        log.info("Starting persistent volume controller");
        if (operationPool.isShutdown()) {
            operationPool = context.newApiCallPool("persistentvolume-operations", 10);
            operations.use(operationPool);
        }
        long period = Math.max(1, syncPeriod.toMillis());
        resync = context.delayer().scheduleWithFixedDelay(() -> {
            try {
                binder.resync();
            } catch (RuntimeException e) {
                log.infof("Cannot resync claims and volumes: %s", e.getMessage());
            }
        }, period, period, TimeUnit.MILLISECONDS);
        // upstream's pv_collector counts the stores at each scrape; here at most once a second after a change
        metricsRefresh = context.delayer().scheduleWithFixedDelay(() -> {
            try {
                binder.refreshMetrics();
            } catch (RuntimeException e) {
                log.debugf("Cannot count volumes and claims: %s", e.getMessage());
            }
        }, 0, BinderMetrics.REFRESH_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down persistent volume controller");
        ScheduledFuture<?> r = resync;
        if (r != null) {
            r.cancel(false);
        }
        ScheduledFuture<?> m = metricsRefresh;
        if (m != null) {
            m.cancel(false);
        }
        operationPool.shutdownNow();
        binder.reset();
        // not leading: the stores are empty, so are the pv_collector rows
        binder.refreshMetrics();
    }

    @Override
    protected void sync(String key) {
        try {
            binder.volumeWorker(key);
        } catch (Exception e) {
            logSyncError("volume", key, e);
        }
    }

    /** Upstream's worker logging: a conflict is expected (a newer version will come), anything else an error. */
    static void logSyncError(org.jboss.logging.Logger log, String kind, String key, Exception e) {
        if (e instanceof KubernetesClientException && ApiErrors.isConflict(e)) {
            log.debugf("Could not sync %s %s: %s", kind, key, shortMessage(e));
        } else {
            log.errorf("Could not sync %s %s: %s", kind, key, e instanceof KubernetesClientException ? ApiErrors.message(e)
                    : shortMessage(e));
            log.debug("sync failure", e);
        }
    }

    private void logSyncError(String kind, String key, Exception e) {
        logSyncError(log, kind, key, e);
    }
}
