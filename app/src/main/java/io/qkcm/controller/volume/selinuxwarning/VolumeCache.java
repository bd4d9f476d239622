package io.qkcm.controller.volume.selinuxwarning;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Upstream's selinuxwarning/cache VolumeCache: for every volume (by unique name) the pods using it with their
 * SELinux mount label and change policy, and the CSI driver; adding a pod's use of a volume reports each
 * conflict with another pod's use, both ways.
 */
final class VolumeCache {

    /** A pod, by namespace and name (upstream's cache.ObjectName). */
    record PodKey(String namespace, String name) {
        @Override
        public String toString() {
            return namespace + "/" + name;
        }
    }

    private record PodInfo(String seLinuxLabel, String changePolicy) {
    }

    private static final class UsedVolume {
        final String csiDriver;
        final Map<PodKey, PodInfo> pods = new LinkedHashMap<>();

        UsedVolume(String csiDriver) {
            this.csiDriver = csiDriver;
        }
    }

    /** One conflict between two pods using the same volume; the event goes to {@code pod}. */
    record Conflict(String propertyName, String eventReason, PodKey pod, String propertyValue, PodKey otherPod,
            String otherPropertyValue) {

        /** Upstream's EventMessage: the other pod is named only when it is in the same namespace. */
        String eventMessage() {
            String value = "\"" + propertyValue + "\"";
            String otherValue = "\"" + otherPropertyValue + "\"";
            if (pod.namespace().equals(otherPod.namespace())) {
                return propertyName + " " + value + " conflicts with pod " + otherPod.name()
                        + " that uses the same volume as this pod with " + propertyName + " " + otherValue
                        + ". If both pods land on the same node, only one of them may access the volume.";
            }
            // Go's fmt.Sprint puts no space between two adjacent strings
            return propertyName + value + " conflicts with another pod that uses the same volume as this pod with a different "
                    + propertyName + ". If both pods land on the same node, only one of them may access the volume.";
        }
    }

    static final String CHANGE_POLICY = "SELinuxChangePolicy";
    static final String CHANGE_POLICY_REASON = "SELinuxChangePolicyConflict";
    static final String LABEL = "SELinuxLabel";
    static final String LABEL_REASON = "SELinuxLabelConflict";

    private final Map<String, UsedVolume> volumes = new HashMap<>();

    synchronized List<Conflict> addVolume(String volumeName, PodKey podKey, String label, String changePolicy, String csiDriver) {
        List<Conflict> conflicts = new ArrayList<>();
        UsedVolume volume = volumes.get(volumeName);
        if (volume == null) {
            volume = new UsedVolume(csiDriver);
            volume.pods.put(podKey, new PodInfo(label, changePolicy));
            volumes.put(volumeName, volume);
            return conflicts;
        }
        PodInfo podInfo = new PodInfo(label, changePolicy);
        if (podInfo.equals(volume.pods.get(podKey))) {
            return conflicts;
        }
        volume.pods.put(podKey, podInfo);
        for (Map.Entry<PodKey, PodInfo> other : volume.pods.entrySet()) {
            PodKey otherPodKey = other.getKey();
            PodInfo otherPodInfo = other.getValue();
            if (!otherPodInfo.changePolicy().equals(changePolicy)) {
                conflicts.add(new Conflict(CHANGE_POLICY, CHANGE_POLICY_REASON, podKey, changePolicy, otherPodKey,
                        otherPodInfo.changePolicy()));
                conflicts.add(new Conflict(CHANGE_POLICY, CHANGE_POLICY_REASON, otherPodKey, otherPodInfo.changePolicy(),
                        podKey, changePolicy));
            }
            if (SELinuxTranslator.conflicts(otherPodInfo.seLinuxLabel(), label)) {
                conflicts.add(new Conflict(LABEL, LABEL_REASON, podKey, label, otherPodKey, otherPodInfo.seLinuxLabel()));
                conflicts.add(new Conflict(LABEL, LABEL_REASON, otherPodKey, otherPodInfo.seLinuxLabel(), podKey, label));
            }
        }
        return conflicts;
    }

    synchronized void deletePod(PodKey podKey) {
        volumes.values().removeIf(volume -> {
            volume.pods.remove(podKey);
            return volume.pods.isEmpty();
        });
    }

    synchronized List<PodKey> podsForCSIDriver(String driverName) {
        List<PodKey> pods = new ArrayList<>();
        for (UsedVolume volume : volumes.values()) {
            if (volume.csiDriver.equals(driverName)) {
                pods.addAll(volume.pods.keySet());
            }
        }
        return pods;
    }

    /**
     * The pods using a volume (by unique name) with their label and policy as {@code "ns/pod label policy"}, in
     * insertion order; upstream's cache dump, for tests.
     */
    synchronized List<String> podsOfVolume(String volumeName) {
        UsedVolume volume = volumes.get(volumeName);
        List<String> pods = new ArrayList<>();
        if (volume != null) {
            volume.pods.forEach((k, v) -> pods.add(k + " " + v.seLinuxLabel() + " " + v.changePolicy()));
        }
        return pods;
    }

    /** Upstream's SendConflicts: every conflicting ordered pair of pods of every volume (the metric). */
    synchronized List<Conflict> conflicts() {
        List<Conflict> all = new ArrayList<>();
        for (UsedVolume volume : volumes.values()) {
            for (Map.Entry<PodKey, PodInfo> a : volume.pods.entrySet()) {
                for (Map.Entry<PodKey, PodInfo> b : volume.pods.entrySet()) {
                    if (a.getKey().equals(b.getKey())) {
                        continue;
                    }
                    if (!a.getValue().changePolicy().equals(b.getValue().changePolicy())) {
                        all.add(new Conflict(CHANGE_POLICY, CHANGE_POLICY_REASON, a.getKey(), a.getValue().changePolicy(),
                                b.getKey(), b.getValue().changePolicy()));
                    }
                    if (SELinuxTranslator.conflicts(a.getValue().seLinuxLabel(), b.getValue().seLinuxLabel())) {
                        all.add(new Conflict(LABEL, LABEL_REASON, a.getKey(), a.getValue().seLinuxLabel(), b.getKey(),
                                b.getValue().seLinuxLabel()));
                    }
                }
            }
        }
        return all;
    }
}
