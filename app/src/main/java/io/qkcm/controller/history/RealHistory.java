package io.qkcm.controller.history;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.LabelSelectors;

/**
 * Upstream's realHistory: reads from the shared ControllerRevision cache, writes through the controller's
 * client. Revisions are written with their data as upstream's exact bytes ({@link ControllerHistory#rawData}).
 */
public final class RealHistory implements History {

    /** client-go's retry.DefaultBackoff: 4 steps from 10 ms, factor 5, jitter 0.1. */
    private static final int RETRY_STEPS = 4;
    private static final long RETRY_FIRST_MS = 10;
    private static final double RETRY_FACTOR = 5.0;
    private static final double RETRY_JITTER = 0.1;

    private final KubernetesClient client;
    private final SharedIndexInformer<ControllerRevision> revisions;

    public RealHistory(KubernetesClient client, SharedIndexInformer<ControllerRevision> revisions) {
        this.client = client;
        this.revisions = revisions;
    }

    @Override
    public List<ControllerRevision> listControllerRevisions(HasMetadata parent, LabelSelector selector) {
        LabelSelectors.Selector sel = LabelSelectors.fromLabelSelector(selector);
        List<ControllerRevision> owned = new ArrayList<>();
        for (ControllerRevision cr : Indexes.byIndex(revisions, Cache.NAMESPACE_INDEX,
                parent.getMetadata().getNamespace())) {
            if (!sel.matches(cr.getMetadata().getLabels())) {
                continue;
            }
            OwnerReference ref = ControllerRefManager.controllerOf(cr);
            if (ref == null || Objects.equals(ref.getUid(), parent.getMetadata().getUid())) {
                owned.add(cr);
            }
        }
        return owned;
    }

    @Override
    public ControllerRevision createControllerRevision(HasMetadata parent, ControllerRevision revision,
            AtomicInteger collisionCount) throws Exception {
        if (collisionCount == null) {
            throw new IllegalArgumentException("collisionCount should not be nil");
        }
        ControllerRevision clone = ControllerHistory.withRawData(revision);
        String ns = parent.getMetadata().getNamespace();
        clone.getMetadata().setNamespace(ns);
        String raw = ControllerHistory.rawData(clone);
        while (true) {
            String hash = ControllerHistory.hashControllerRevision(revision, collisionCount.get());
            clone.getMetadata().setName(ControllerHistory.controllerRevisionName(parent.getMetadata().getName(), hash));
            try {
                return client.apps().controllerRevisions().inNamespace(ns).resource(clone).create();
            } catch (RuntimeException e) {
                if (!ApiErrors.isAlreadyExists(e)) {
                    throw e;
                }
            }
            ControllerRevision exists = client.apps().controllerRevisions().inNamespace(ns)
                    .withName(clone.getMetadata().getName()).get();
            if (exists == null) {
                throw new IllegalStateException("controllerrevisions.apps \"" + clone.getMetadata().getName()
                        + "\" not found");
            }
            if (raw.equals(ControllerHistory.rawData(exists))) {
                return exists;
            }
            collisionCount.incrementAndGet();
        }
    }

    @Override
    public ControllerRevision updateControllerRevision(ControllerRevision revision, long newRevision)
            throws Exception {
        ControllerRevision clone = ControllerHistory.withRawData(revision);
        long delay = RETRY_FIRST_MS;
        for (int step = 1;; step++) {
            if (clone.getRevision() != null && clone.getRevision() == newRevision) {
                return clone;
            }
            clone.setRevision(newRevision);
            try {
                return client.apps().controllerRevisions().inNamespace(clone.getMetadata().getNamespace())
                        .resource(clone).update();
            } catch (RuntimeException e) {
                if (!ApiErrors.isConflict(e) || step >= RETRY_STEPS) {
                    throw e;
                }
                ControllerRevision cached = revisions.getIndexer()
                        .getByKey(clone.getMetadata().getNamespace() + "/" + clone.getMetadata().getName());
                if (cached != null) {
                    clone = ControllerHistory.withRawData(cached);
                }
            }
            Thread.sleep(delay + (long) (ThreadLocalRandom.current().nextDouble() * RETRY_JITTER * delay));
            delay = (long) (delay * RETRY_FACTOR);
        }
    }

    @Override
    public void deleteControllerRevision(ControllerRevision revision) throws Exception {
        client.apps().controllerRevisions().inNamespace(revision.getMetadata().getNamespace())
                .withName(revision.getMetadata().getName()).delete();
    }

    @Override
    public ControllerRevision adoptControllerRevision(HasMetadata parent, String parentApiVersion, String parentKind,
            ControllerRevision revision) throws Exception {
        OwnerReference owner = ControllerRefManager.controllerOf(revision);
        if (owner != null) {
            throw new IllegalStateException("attempt to adopt revision owned by " + owner);
        }
        String patch = ControllerRefManager.ownerRefControllerPatch(parent, parentApiVersion, parentKind,
                revision.getMetadata().getUid(), null);
        return client.apps().controllerRevisions().inNamespace(parent.getMetadata().getNamespace())
                .withName(revision.getMetadata().getName()).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
    }

    @Override
    public ControllerRevision releaseControllerRevision(HasMetadata parent, ControllerRevision revision)
            throws Exception {
        String patch = ControllerRefManager.deleteOwnerRefStrategicMergePatch(revision.getMetadata().getUid(),
                List.of(parent.getMetadata().getUid()), null);
        try {
            return client.apps().controllerRevisions().inNamespace(revision.getMetadata().getNamespace())
                    .withName(revision.getMetadata().getName()).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
        } catch (RuntimeException e) {
            if (ApiErrors.isNotFound(e) || ApiErrors.isInvalid(e)) {
                return null;
            }
            throw e;
        }
    }
}
