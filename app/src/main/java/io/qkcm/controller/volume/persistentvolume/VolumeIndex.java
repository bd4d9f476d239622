package io.qkcm.controller.volume.persistentvolume;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;

/**
 * Upstream's persistentVolumeOrderedIndex (index.go): the controller's volume store, searched by
 * access-mode sets. A claim is matched against the volumes of each set of modes that contains all it
 * asks for, the smallest sets first, so a claim gets the closest modes to what it asked for.
 */
final class VolumeIndex {

    final LatestObjects<PersistentVolume> store = new LatestObjects<>(v -> v.getMetadata().getName(), "volume");

    /** listByAccessModes: the volumes whose modes (as a string) are exactly {@code modes}. */
    List<PersistentVolume> listByAccessModes(List<String> modes) {
        String key = StorageHelpers.accessModesAsString(modes);
        List<PersistentVolume> out = new ArrayList<>();
        for (PersistentVolume v : store.list()) {
            if (StorageHelpers.accessModesAsString(v.getSpec().getAccessModes()).equals(key)) {
                out.add(v);
            }
        }
        return out;
    }

    /** findBestMatchForClaim. */
    PersistentVolume findBestMatchForClaim(PersistentVolumeClaim claim, boolean delayBinding, boolean vacEnabled)
            throws StorageHelpers.BindingException {
        for (List<String> modes : allPossibleMatchingAccessModes(claim.getSpec().getAccessModes())) {
            PersistentVolume best = StorageHelpers.findMatchingVolume(claim, listByAccessModes(modes), delayBinding,
                    vacEnabled);
            if (best != null) {
                return best;
            }
        }
        return null;
    }

    /** The indexed mode sets containing every requested mode, fewest modes first. */
    List<List<String>> allPossibleMatchingAccessModes(List<String> requested) {
        Set<String> keys = new LinkedHashSet<>();
        for (PersistentVolume v : store.list()) {
            keys.add(StorageHelpers.accessModesAsString(v.getSpec().getAccessModes()));
        }
        List<List<String>> matched = new ArrayList<>();
        for (String key : keys) {
            List<String> indexed = StorageHelpers.accessModesFromString(key);
            if (StorageHelpers.containsAllAccessModes(indexed, requested)) {
                matched.add(indexed);
            }
        }
        matched.sort(Comparator.comparingInt(List::size));
        return matched;
    }
}
