package io.qkcm.controller.volume.persistentvolume;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Upstream's framework_test.go for a real API server: volumes and claims described as upstream's
 * {@code newVolume} / {@code newClaim} describe them, created in one namespace (volumes, being
 * cluster-scoped, get the namespace's suffix), with upstream's symbolic claim UIDs ("uid1-1") mapped
 * to the UIDs the API server gives the claims (any other symbol becomes a UID no claim has).
 */
final class BinderWorld {

    static final List<String> MODES = List.of("ReadWriteOnce", "ReadOnlyMany");

    /** upstream's newVolume. */
    record Vol(String name, String size, String uid, String claim, String phase, String policy, String cls,
            List<String> annotations, Map<String, String> labels, String volumeMode, String message) {
        Vol withLabels(Map<String, String> l) {
            return new Vol(name, size, uid, claim, phase, policy, cls, annotations, l, volumeMode, message);
        }

        Vol withMode(String m) {
            return new Vol(name, size, uid, claim, phase, policy, cls, annotations, labels, m, message);
        }

        Vol withMessage(String m) {
            return new Vol(name, size, uid, claim, phase, policy, cls, annotations, labels, volumeMode, m);
        }
    }

    /** upstream's newClaim; {@code cls} null is a nil class. */
    record Clm(String name, String uid, String size, String volumeName, String phase, String cls, List<String> annotations,
            Map<String, String> selector, List<String> accessModes, String expectedCapacity, Map<String, String> extra,
            boolean skipLocalStore, String volumeMode) {
        Clm withSelector(Map<String, String> s) {
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, s, accessModes, expectedCapacity, extra,
                    skipLocalStore, volumeMode);
        }

        Clm withModes(List<String> m) {
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, selector, m, expectedCapacity, extra,
                    skipLocalStore, volumeMode);
        }

        Clm withCapacity(String c) {
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, selector, accessModes, c, extra,
                    skipLocalStore, volumeMode);
        }

        Clm withAnnotation(String k, String v) {
            Map<String, String> e = new LinkedHashMap<>(extra);
            e.put(k, v);
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, selector, accessModes, expectedCapacity, e,
                    skipLocalStore, volumeMode);
        }

        Clm outOfLocalStore() {
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, selector, accessModes, expectedCapacity,
                    extra, true, volumeMode);
        }

        Clm withMode(String m) {
            return new Clm(name, uid, size, volumeName, phase, cls, annotations, selector, accessModes, expectedCapacity,
                    extra, skipLocalStore, m);
        }
    }

    static Vol vol(String name, String size, String uid, String claim, String phase, String policy, String cls,
            String... annotations) {
        return new Vol(name, size, uid, claim, phase, policy, cls, List.of(annotations), Map.of(), "Filesystem", null);
    }

    static Clm claim(String name, String uid, String size, String volumeName, String phase, String cls,
            String... annotations) {
        return new Clm(name, uid, size, volumeName, phase, cls, List.of(annotations), null, MODES, size, Map.of(), false,
                "Filesystem");
    }

    final KubernetesClient client;
    final String ns;
    final String suffix;
    final Map<String, String> uids = new HashMap<>();

    BinderWorld(KubernetesClient client, String ns) {
        this.client = client;
        this.ns = ns;
        this.suffix = ns.substring(ns.lastIndexOf('-') + 1);
    }

    /** A name the API server accepts, unique to this world for volumes. */
    String volumeName(String name) {
        return name.isEmpty() ? "" : name.replace('_', '-').toLowerCase() + "-" + suffix;
    }

    static String claimName(String name) {
        return name.replace('_', '-').toLowerCase();
    }

    String realUid(String symbol) {
        if (symbol.isEmpty()) {
            return "";
        }
        return uids.computeIfAbsent(symbol, s -> UUID.nameUUIDFromBytes((s + "/" + ns).getBytes()).toString());
    }

    /** Creates the claims (with their status) and records their UIDs under upstream's symbols. */
    List<PersistentVolumeClaim> createClaims(List<Clm> claims) {
        List<PersistentVolumeClaim> out = new ArrayList<>();
        for (Clm c : claims) {
            Map<String, String> annotations = new LinkedHashMap<>();
            for (String a : c.annotations()) {
                annotations.put(a, "yes");
            }
            annotations.putAll(c.extra());
            PersistentVolumeClaimBuilder b = new PersistentVolumeClaimBuilder().withNewMetadata()
                    .withName(claimName(c.name())).withNamespace(ns).withAnnotations(annotations.isEmpty() ? null : annotations)
                    .endMetadata().withNewSpec().withAccessModes(c.accessModes()).withNewResources()
                    .addToRequests("storage", new Quantity(c.size())).endResources()
                    .withVolumeName(c.volumeName().isEmpty() ? null : volumeName(c.volumeName()))
                    .withStorageClassName(c.cls()).withVolumeMode(c.volumeMode()).endSpec();
            if (c.selector() != null) {
                b.editSpec().withSelector(new LabelSelectorBuilder().withMatchLabels(c.selector()).build()).endSpec();
            }
            PersistentVolumeClaim created = client.persistentVolumeClaims().inNamespace(ns).resource(b.build()).create();
            uids.put(c.uid(), created.getMetadata().getUid());
            created.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatus());
            created.getStatus().setPhase(c.phase());
            if ("Bound".equals(c.phase())) {
                created.getStatus().setAccessModes(c.accessModes());
                created.getStatus().setCapacity(Map.of("storage", new Quantity(c.size())));
            }
            out.add(client.persistentVolumeClaims().inNamespace(ns).resource(created).updateStatus());
        }
        return out;
    }

    /** Creates the volumes (with their phase). */
    List<PersistentVolume> createVolumes(List<Vol> volumes) {
        List<PersistentVolume> out = new ArrayList<>();
        for (Vol v : volumes) {
            Map<String, String> annotations = new LinkedHashMap<>();
            for (String a : v.annotations()) {
                annotations.put(a, StorageHelpers.ANN_DYNAMICALLY_PROVISIONED.equals(a) ? "mock.example.com/provisioner"
                        : "yes");
            }
            PersistentVolumeBuilder b = new PersistentVolumeBuilder().withNewMetadata().withName(volumeName(v.name()))
                    .withAnnotations(annotations.isEmpty() ? null : annotations)
                    .withLabels(v.labels().isEmpty() ? null : v.labels()).endMetadata().withNewSpec()
                    .withCapacity(Map.of("storage", new Quantity(v.size()))).withAccessModes(MODES)
                    .withPersistentVolumeReclaimPolicy(v.policy()).withStorageClassName(v.cls())
                    .withVolumeMode(v.volumeMode())
                    // a local volume: a source no volume plugin of the PV controller handles, as upstream's
                    // tests' volumes have none
                    .withNewLocal().withPath("/mnt/" + v.name()).endLocal()
                    .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                    .withKey("kubernetes.io/hostname").withOperator("In").withValues("node1").endMatchExpression()
                    .endNodeSelectorTerm().endRequired().endNodeAffinity().endSpec();
            if (!v.claim().isEmpty()) {
                b.editSpec().withClaimRef(claimRef(v.claim(), v.uid())).endSpec();
            }
            PersistentVolume created = client.persistentVolumes().resource(b.build()).create();
            if (v.phase() != null && !v.phase().equals(StorageHelpers.volumePhase(created))) {
                created.getStatus().setPhase(v.phase());
                created = client.persistentVolumes().resource(created).updateStatus();
            }
            out.add(created);
        }
        return out;
    }

    ObjectReference claimRef(String claim, String uid) {
        ObjectReference ref = new ObjectReference();
        ref.setKind("PersistentVolumeClaim");
        ref.setApiVersion("v1");
        ref.setNamespace(ns);
        ref.setName(claimName(claim));
        ref.setUid(uid.isEmpty() ? null : realUid(uid));
        return ref;
    }

    PersistentVolume volume(String name) {
        return client.persistentVolumes().withName(volumeName(name)).get();
    }

    PersistentVolumeClaim claim(String name) {
        return client.persistentVolumeClaims().inNamespace(ns).withName(claimName(name)).get();
    }

    /** "Type Reason" of the events about this world's objects (claims here, volumes in default). */
    List<String> events() {
        List<String> out = new ArrayList<>();
        for (Event e : client.v1().events().inNamespace(ns).list().getItems()) {
            out.add(e.getType() + " " + e.getReason());
        }
        for (Event e : client.v1().events().inNamespace("default").list().getItems()) {
            if (e.getInvolvedObject().getName() != null && e.getInvolvedObject().getName().endsWith("-" + suffix)
                    && "PersistentVolume".equals(e.getInvolvedObject().getKind())) {
                out.add(e.getType() + " " + e.getReason());
            }
        }
        return out;
    }

    void deleteVolumes() {
        for (PersistentVolume pv : client.persistentVolumes().list().getItems()) {
            if (pv.getMetadata().getName().endsWith("-" + suffix)) {
                client.persistentVolumes().resource(pv).delete();
                try {
                    // the API server's admission adds kubernetes.io/pv-protection; no controller removes it here
                    client.persistentVolumes().withName(pv.getMetadata().getName()).edit(v -> {
                        v.getMetadata().setFinalizers(List.of());
                        return v;
                    });
                } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                    if (e.getCode() != 404) {
                        throw e;
                    }
                }
            }
        }
    }
}
