package io.qkcm.runtime.events;

import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * Records core/v1 Events about an object, as client-go's record.EventRecorder: the source component
 * is the controller's upstream name (e.g. {@code replicaset-controller}); recording never blocks the
 * caller and never fails a sync.
 */
public interface EventRecorder {

    String NORMAL = "Normal";
    String WARNING = "Warning";

    void event(HasMetadata object, String type, String reason, String message);

    default void eventf(HasMetadata object, String type, String reason, String format, Object... args) {
        event(object, type, reason, String.format(format, args));
    }
}
