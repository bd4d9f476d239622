package io.qkcm.controller.history;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;

/**
 * Upstream's history.Interface: a controller's ControllerRevisions, read from the shared cache and
 * written through the controller's client. Arguments are never modified.
 */
public interface History {

    /** The revisions in the parent's namespace matching {@code selector}, owned by the parent or by no controller. */
    List<ControllerRevision> listControllerRevisions(HasMetadata parent, LabelSelector selector);

    /**
     * Creates {@code revision} named from its hash with {@code collisionCount}; when the name is taken by a
     * revision with other data, increments {@code collisionCount} and tries the next name. A taken name
     * holding equal data returns that revision.
     */
    ControllerRevision createControllerRevision(HasMetadata parent, ControllerRevision revision,
            AtomicInteger collisionCount) throws Exception;

    void deleteControllerRevision(ControllerRevision revision) throws Exception;

    /** Sets the revision number (PUT, retried on conflict from the cache as upstream). */
    ControllerRevision updateControllerRevision(ControllerRevision revision, long newRevision) throws Exception;

    /** Adds a controller reference to an orphan (strategic-merge patch, UID-guarded); owned ones are refused. */
    ControllerRevision adoptControllerRevision(HasMetadata parent, String parentApiVersion, String parentKind,
            ControllerRevision revision) throws Exception;

    /** Removes the parent's owner reference; null when the revision is gone or no longer the parent's. */
    ControllerRevision releaseControllerRevision(HasMetadata parent, ControllerRevision revision) throws Exception;
}
