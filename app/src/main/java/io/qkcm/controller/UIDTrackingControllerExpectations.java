package io.qkcm.controller;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * Upstream's UIDTrackingControllerExpectations: deletions are tracked by the key
 * ({@code namespace/name}) of each pod the controller deleted, so a deletion is counted once whether
 * it is observed as an update setting deletionTimestamp, as the final delete, or both.
 */
public class UIDTrackingControllerExpectations extends ControllerExpectations {

    private static final Logger LOG = Logger.getLogger(UIDTrackingControllerExpectations.class);

    private final Object uidLock = new Object();
    private final Map<String, Set<String>> uidStore = new HashMap<>();

    public UIDTrackingControllerExpectations() {
        super();
    }

    public UIDTrackingControllerExpectations(LongSupplier nanoClock) {
        super(nanoClock);
    }

    /** The keys of the deletions still expected for {@code controllerKey}, or null. */
    public Set<String> getUIDs(String controllerKey) {
        synchronized (uidLock) {
            Set<String> s = uidStore.get(controllerKey);
            return s == null ? null : Set.copyOf(s);
        }
    }

    /** Expects the deletion of exactly these pod keys. */
    public void expectDeletions(String controllerKey, Collection<String> deletedKeys) {
        Set<String> expected = new HashSet<>(deletedKeys);
        LOG.tracef("controller %s waiting on deletions of %s", controllerKey, deletedKeys);
        synchronized (uidLock) {
            Set<String> existing = uidStore.get(controllerKey);
            if (existing != null && !existing.isEmpty()) {
                LOG.errorf("clobbering existing delete keys of %s: %s", controllerKey, existing);
            }
            uidStore.put(controllerKey, expected);
            super.expectDeletions(controllerKey, expected.size());
        }
    }

    /** Records the deletion of {@code deleteKey} if it was expected; repeated observations count once. */
    public void deletionObserved(String controllerKey, String deleteKey) {
        synchronized (uidLock) {
            Set<String> uids = uidStore.get(controllerKey);
            if (uids != null && uids.contains(deleteKey)) {
                LOG.tracef("controller %s received delete for pod %s", controllerKey, deleteKey);
                super.deletionObserved(controllerKey);
                uids.remove(deleteKey);
            }
        }
    }

    @Override
    public void deleteExpectations(String controllerKey) {
        synchronized (uidLock) {
            super.deleteExpectations(controllerKey);
            uidStore.remove(controllerKey);
        }
    }
}
