package io.qkcm.controller.volume.common;

import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * Upstream's pkg/controller/volume/protectionutil: when a protection finalizer must be removed (the
 * object is being deleted and still has it) and when it must be added (not being deleted, lacks it).
 */
public final class Protection {

    private Protection() {
    }

    /** Upstream's IsDeletionCandidate. */
    public static boolean isDeletionCandidate(HasMetadata obj, String finalizer) {
        return obj.getMetadata().getDeletionTimestamp() != null && hasFinalizer(obj, finalizer);
    }

    /** Upstream's NeedToAddFinalizer. */
    public static boolean needToAddFinalizer(HasMetadata obj, String finalizer) {
        return obj.getMetadata().getDeletionTimestamp() == null && !hasFinalizer(obj, finalizer);
    }

    public static boolean hasFinalizer(HasMetadata obj, String finalizer) {
        List<String> finalizers = obj.getMetadata().getFinalizers();
        return finalizers != null && finalizers.contains(finalizer);
    }
}
