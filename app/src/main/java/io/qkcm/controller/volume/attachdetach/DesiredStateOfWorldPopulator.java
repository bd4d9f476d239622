package io.qkcm.controller.volume.attachdetach;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Upstream's populator.DesiredStateOfWorldPopulator: every loop period, removes from the desired state the
 * pods that are gone from the pod cache (or replaced by another UID, or terminated) and volumes that
 * stopped being attachable (a CSIDriver now saying attachRequired: false); every listPodsRetryDuration,
 * adds every active pod again.
 */
final class DesiredStateOfWorldPopulator {

    private static final Logger LOG = Logger.getLogger(DesiredStateOfWorldPopulator.class);

    private final Duration listPodsRetryDuration;
    private final BiFunction<String, String, Pod> podLister;
    private final Supplier<Collection<Pod>> allPods;
    private final DesiredStateOfWorld dsw;
    private final PodVolumes podVolumes;
    private final VolumePlugins plugin;
    private final Clock clock;
    private Instant timeOfLastListPods = Instant.EPOCH;

    DesiredStateOfWorldPopulator(Duration listPodsRetryDuration, BiFunction<String, String, Pod> podLister,
            Supplier<Collection<Pod>> allPods, DesiredStateOfWorld dsw, PodVolumes podVolumes, VolumePlugins plugin,
            Clock clock) {
        this.listPodsRetryDuration = listPodsRetryDuration;
        this.podLister = podLister;
        this.allPods = allPods;
        this.dsw = dsw;
        this.podVolumes = podVolumes;
        this.plugin = plugin;
        this.clock = clock;
    }

    /** populatorLoopFunc. */
    void loop() {
        findAndRemoveDeletedPods();
        if (Duration.between(timeOfLastListPods, clock.instant()).compareTo(listPodsRetryDuration) < 0) {
            return;
        }
        findAndAddActivePods();
    }

    void findAndRemoveDeletedPods() {
        for (Map.Entry<String, DesiredStateOfWorld.PodToAdd> e : dsw.getPodToAdd().entrySet()) {
            String uid = e.getKey();
            DesiredStateOfWorld.PodToAdd toAdd = e.getValue();
            Pod informerPod = podLister.apply(toAdd.pod().getMetadata().getNamespace(), toAdd.pod().getMetadata().getName());
            if (informerPod != null && PodVolumes.determineVolumeAction(informerPod, true)
                    && uid.equals(informerPod.getMetadata().getUid())) {
                continue;
            }
            LOG.debugf("Removing pod %s/%s (%s) from dsw because it does not exist in pod informer",
                    toAdd.pod().getMetadata().getNamespace(), toAdd.pod().getMetadata().getName(), uid);
            dsw.deletePod(uid, toAdd.volumeName(), toAdd.nodeName());
        }
        for (DesiredStateOfWorld.VolumeToAttach volume : dsw.getVolumesToAttach()) {
            if (!plugin.isAttachable(volume.volumeSpec())) {
                LOG.infof("Volume changes from attachable to non-attachable: volumeName %s", volume.volumeName());
                for (Pod pod : volume.scheduledPods()) {
                    dsw.deletePod(pod.getMetadata().getUid(), volume.volumeName(), volume.nodeName());
                }
            }
        }
    }

    void findAndAddActivePods() {
        Collection<Pod> pods = allPods.get();
        timeOfLastListPods = clock.instant();
        for (Pod pod : pods) {
            if (PodVolumes.isPodTerminated(pod)) {
                continue;
            }
            podVolumes.processPodVolumes(pod, true, dsw);
        }
    }
}
