package io.qkcm.controller.volume.persistentvolume;

import java.util.List;
import java.util.UUID;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServer;

/** The binder tests' reads and clean-ups of volumes, claims and events, as the test's user. */
final class VolumeObjects {

    private static KubernetesClient client;

    private VolumeObjects() {
    }

    /** One client for the test JVM (closed with it): the binder's test classes share it. */
    static synchronized KubernetesClient client() {
        if (client == null) {
            client = RealApiServer.get().newClient();
        }
        return client;
    }

    static String suffix() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    static PersistentVolume volume(String name) {
        return client().persistentVolumes().withName(name).get();
    }

    static PersistentVolumeClaim claim(String ns, String name) {
        return client().persistentVolumeClaims().inNamespace(ns).withName(name).get();
    }

    static String phase(PersistentVolume v) {
        return v == null ? null : StorageHelpers.volumePhase(v);
    }

    static String phase(PersistentVolumeClaim c) {
        return c == null ? null : StorageHelpers.claimPhase(c);
    }

    static List<Event> events(String ns, String object, String reason) {
        return client().v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> object.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason())).toList();
    }

    /** Deletes the volume; its pv-protection finalizer (the API server's admission adds it) is removed too. */
    static void deleteVolume(String name) {
        client().persistentVolumes().withName(name).delete();
        withoutFinalizers(client().persistentVolumes().withName(name));
    }

    /**
     * Deletes the claim as the user and the pvc-protection controller (not running here) do: the
     * admission's kubernetes.io/pvc-protection finalizer is removed once no pod uses the claim.
     */
    static void deleteClaim(String ns, String name) {
        client().persistentVolumeClaims().inNamespace(ns).withName(name).delete();
        withoutFinalizers(client().persistentVolumeClaims().inNamespace(ns).withName(name));
    }

    /** The volume's kubernetes.io/pv-protection finalizer (admission's) removed, as the pv-protection controller does. */
    static void releaseVolumeProtection(String name) {
        try {
            Conflicts.retry(() -> client().persistentVolumes().withName(name).edit(v -> {
                List<String> kept = new java.util.ArrayList<>(StorageHelpers.list(v.getMetadata().getFinalizers()));
                kept.remove("kubernetes.io/pv-protection");
                v.getMetadata().setFinalizers(kept);
                return v;
            }));
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }

    static <T extends HasMetadata> void withoutFinalizers(Resource<T> resource) {
        try {
            Conflicts.retry(() -> resource.edit(o -> {
                o.getMetadata().setFinalizers(List.of());
                return o;
            }));
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }
}
