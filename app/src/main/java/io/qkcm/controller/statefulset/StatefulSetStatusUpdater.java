package io.qkcm.controller.statefulset;

import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;

/**
 * Upstream's realStatefulSetStatusUpdater: PUT of the status subresource, retried on conflict (client-go's
 * retry.DefaultRetry: 5 steps of 10 ms, jitter 0.1) from the cached set.
 */
class StatefulSetStatusUpdater {

    private static final Logger LOG = Logger.getLogger(StatefulSetStatusUpdater.class);

    private final KubernetesClient client;
    private final SharedIndexInformer<StatefulSet> sets;

    StatefulSetStatusUpdater(KubernetesClient client, SharedIndexInformer<StatefulSet> sets) {
        this.client = client;
        this.sets = sets;
    }

    void updateStatefulSetStatus(StatefulSet set, StatefulSetStatus status) throws InterruptedException {
        for (int step = 1;; step++) {
            set.setStatus(status);
            try {
                client.apps().statefulSets().inNamespace(set.getMetadata().getNamespace()).resource(set).updateStatus();
                return;
            } catch (RuntimeException e) {
                StatefulSet updated = sets.getIndexer()
                        .getByKey(set.getMetadata().getNamespace() + "/" + set.getMetadata().getName());
                if (updated != null) {
                    set = io.qkcm.runtime.DeepCopy.of(updated);
                } else {
                    LOG.errorf("error getting updated StatefulSet %s/%s from lister: not found",
                            set.getMetadata().getNamespace(), set.getMetadata().getName());
                }
                if (!ApiErrors.isConflict(e) || step >= 5) {
                    throw e;
                }
            }
            Thread.sleep(10 + ThreadLocalRandom.current().nextInt(2));
        }
    }
}
