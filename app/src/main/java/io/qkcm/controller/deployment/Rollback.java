package io.qkcm.controller.deployment;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.qkcm.controller.deployment.util.DeploymentUtil;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream rollback.go: the deprecated {@code deprecated.deployment.rollback.to} annotation (what
 * extensions/v1beta1 rollbacks left behind). {@code kubectl rollout undo} on apps/v1 is client-side
 * and needs nothing from here: it patches the template back.
 */
final class Rollback {

    private final DeploymentContext ctx;
    private final Sync sync;

    Rollback(DeploymentContext ctx, Sync sync) {
        this.ctx = ctx;
        this.sync = sync;
    }

    void rollback(Deployment d, List<ReplicaSet> rsList) throws Exception {
        Sync.NewAndOld rs = sync.getAllReplicaSetsAndSyncRevision(d, rsList, true);
        List<ReplicaSet> allRSs = rs.all();
        long revision = getRollbackTo(d);
        if (revision == 0) {
            revision = DeploymentUtil.lastRevision(allRSs);
            if (revision == 0) {
                ctx.recorder().event(d, EventRecorder.WARNING, DeploymentUtil.ROLLBACK_REVISION_NOT_FOUND,
                        "Unable to find last revision.");
                updateDeploymentAndClearRollbackTo(d);
                return;
            }
        }
        for (ReplicaSet r : allRSs) {
            if (r == null) {
                continue;
            }
            long v;
            try {
                v = DeploymentUtil.revision(r);
            } catch (NumberFormatException e) {
                continue;
            }
            if (v == revision) {
                boolean performed = rollbackToTemplate(d, r);
                if (performed) {
                    ctx.recorder().event(d, EventRecorder.NORMAL, DeploymentUtil.ROLLBACK_DONE,
                            String.format("Rolled back deployment \"%s\" to revision %d", d.getMetadata().getName(), revision));
                }
                return;
            }
        }
        ctx.recorder().event(d, EventRecorder.WARNING, DeploymentUtil.ROLLBACK_REVISION_NOT_FOUND,
                "Unable to find the revision to rollback to.");
        updateDeploymentAndClearRollbackTo(d);
    }

    private boolean rollbackToTemplate(Deployment d, ReplicaSet rs) {
        boolean performed = false;
        if (!DeploymentUtil.equalIgnoreHash(d.getSpec().getTemplate(), rs.getSpec().getTemplate())) {
            DeploymentUtil.setFromReplicaSetTemplate(d, rs.getSpec().getTemplate());
            DeploymentUtil.setDeploymentAnnotationsTo(d, rs);
            performed = true;
        } else {
            ctx.recorder().event(d, EventRecorder.WARNING, DeploymentUtil.ROLLBACK_TEMPLATE_UNCHANGED,
                    String.format("The rollback revision contains the same template as current deployment \"%s\"",
                            d.getMetadata().getName()));
        }
        updateDeploymentAndClearRollbackTo(d);
        return performed;
    }

    private void updateDeploymentAndClearRollbackTo(Deployment d) {
        Map<String, String> a = d.getMetadata().getAnnotations();
        if (a != null) {
            a.remove(DeploymentUtil.DEPRECATED_ROLLBACK_TO);
        }
        ctx.client().apps().deployments().inNamespace(d.getMetadata().getNamespace()).resource(d).update();
    }

    /** The revision to roll back to, or null without (or with an unparsable) annotation. */
    static Long getRollbackTo(Deployment d) {
        Map<String, String> a = d.getMetadata().getAnnotations();
        String revision = a == null ? null : a.get(DeploymentUtil.DEPRECATED_ROLLBACK_TO);
        if (revision == null || revision.isEmpty()) {
            return null;
        }
        try {
            return Long.parseLong(revision);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
