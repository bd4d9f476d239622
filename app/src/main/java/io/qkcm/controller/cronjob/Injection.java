package io.qkcm.controller.cronjob;

import java.util.List;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.clients.ClientGoCreates;

/**
 * Upstream's injection.go: the CronJob controller's API calls, behind interfaces so the sync logic
 * can be tested without an API server. The real ones call the API server directly (no cache).
 */
final class Injection {

    private Injection() {
    }

    /** Upstream's cjControlInterface. */
    interface CJControl {
        CronJob updateStatus(CronJob cj);

        /** The CronJob as the API server has it; a NotFound error if it does not exist. */
        CronJob getCronJob(String namespace, String name);
    }

    /** Upstream's jobControlInterface. */
    interface JobControl {
        /** The Job as the API server has it; a NotFound error if it does not exist. */
        Job getJob(String namespace, String name);

        Job createJob(String namespace, Job job);

        /** Deletes the Job with background propagation; a NotFound error if it does not exist. */
        void deleteJob(String namespace, String name);
    }

    static KubernetesClientException notFound(String resource, String name) {
        Status status = new StatusBuilder().withStatus("Failure").withCode(404).withReason("NotFound")
                .withMessage(resource + " \"" + name + "\" not found")
                .withNewDetails().withName(name).withGroup("batch").withKind(resource.replace(".batch", "")).endDetails()
                .build();
        return new KubernetesClientException(status);
    }

    record RealCJControl(KubernetesClient client) implements CJControl {
        @Override
        public CronJob updateStatus(CronJob cj) {
            return client.batch().v1().cronjobs().inNamespace(cj.getMetadata().getNamespace()).resource(cj).updateStatus();
        }

        @Override
        public CronJob getCronJob(String namespace, String name) {
            CronJob cj = client.batch().v1().cronjobs().inNamespace(namespace).withName(name).get();
            if (cj == null) {
                throw notFound("cronjobs.batch", name);
            }
            return cj;
        }
    }

    /** Job creations are sent as client-go sends them ({@link ClientGoCreates}): never again after an I/O error. */
    record RealJobControl(KubernetesClient client, ClientGoCreates creations) implements JobControl {
        RealJobControl(KubernetesClient client) {
            this(client, new ClientGoCreates(client));
        }

        @Override
        public Job getJob(String namespace, String name) {
            if (namespace == null || namespace.isEmpty()) {
                // upstream's client asks GET /apis/batch/v1/jobs/<name> (no namespace), which the API
                // server answers 404: what syncCronJob gets after AlreadyExists, since upstream's Job
                // request carries no namespace
                throw new KubernetesClientException(new StatusBuilder().withStatus("Failure").withCode(404)
                        .withReason("NotFound").withMessage("the server could not find the requested resource")
                        .withNewDetails().endDetails().build());
            }
            Job job = client.batch().v1().jobs().inNamespace(namespace).withName(name).get();
            if (job == null) {
                throw notFound("jobs.batch", name);
            }
            return job;
        }

        @Override
        public Job createJob(String namespace, Job job) {
            return creations.create(c -> c.batch().v1().jobs().inNamespace(namespace).resource(job).create());
        }

        @Override
        public void deleteJob(String namespace, String name) {
            List<StatusDetails> deleted = client.batch().v1().jobs().inNamespace(namespace).withName(name)
                    .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            if (deleted == null || deleted.isEmpty()) {
                // fabric8 answers a 404 with an empty list; upstream's client returns the NotFound error
                throw notFound("jobs.batch", name);
            }
        }
    }
}
