package io.qkcm.controller.devicetainteviction;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintSelector;
import io.fabric8.kubernetes.api.model.resource.v1beta2.Device;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaint;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.qkcm.controller.util.resource.DeviceClass;
import io.qkcm.controller.util.resource.ResourceSlice;
import io.qkcm.runtime.DeepCopy;

/**
 * Upstream's resourceslice tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker) with device
 * taints on: each ResourceSlice as the controller sees it, with the taints of every DeviceTaintRule that
 * selects a device appended to that device's own. A slice event is always passed on; a rule or class event
 * passes a slice on only when its devices' taints changed.
 *
 * <p>Not ported: CEL selectors. A rule with a CEL selector, or naming a DeviceClass that has one, applies
 * to no device here (logged once per rule generation); upstream evaluates them.
 */
final class SliceTracker {

    private static final Logger LOG = Logger.getLogger(SliceTracker.class);

    private final Store<ResourceSlice> slices;
    private final Store<DeviceTaintRule> rules;
    private final Store<DeviceClass> classes;
    /** Receives (old, new) patched slices; either may be null. Called with the controller's lock held. */
    private final BiConsumer<ResourceSlice, ResourceSlice> handler;
    private final Map<String, ResourceSlice> patched = new HashMap<>();
    private final Map<String, Long> celWarned = new HashMap<>();

    SliceTracker(Store<ResourceSlice> slices, Store<DeviceTaintRule> rules, Store<DeviceClass> classes,
            BiConsumer<ResourceSlice, ResourceSlice> handler) {
        this.slices = slices;
        this.rules = rules;
        this.classes = classes;
        this.handler = handler;
    }

    /** A ResourceSlice was added, updated or deleted. */
    void sliceChanged(String name) {
        syncSlice(name, true);
    }

    /** A DeviceTaintRule or DeviceClass changed: every slice it may apply to is patched again. */
    void rulesChanged() {
        for (String name : List.copyOf(patchedAndCachedNames())) {
            syncSlice(name, false);
        }
    }

    void clear() {
        patched.clear();
    }

    private List<String> patchedAndCachedNames() {
        List<String> names = new ArrayList<>(slices.listKeys());
        for (String name : patched.keySet()) {
            if (!names.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    private void syncSlice(String name, boolean sendEvent) {
        ResourceSlice slice = slices.getByKey(name);
        ResourceSlice oldPatched = patched.get(name);
        if (slice == null) {
            if (oldPatched != null) {
                patched.remove(name);
                handler.accept(oldPatched, null);
            }
            return;
        }
        ResourceSlice newPatched = applyRules(slice);
        if (!sendEvent && oldPatched != null) {
            List<Device> oldDevices = devices(oldPatched);
            List<Device> newDevices = devices(newPatched);
            for (int i = 0; i < newDevices.size() && i < oldDevices.size(); i++) {
                if (!taintsEqual(oldDevices.get(i).getTaints(), newDevices.get(i).getTaints())) {
                    sendEvent = true;
                }
            }
        }
        patched.put(name, newPatched);
        if (sendEvent) {
            handler.accept(oldPatched, newPatched);
        }
    }

    static List<Device> devices(ResourceSlice slice) {
        return slice.getSpec() == null || slice.getSpec().getDevices() == null ? List.of() : slice.getSpec().getDevices();
    }

    /** Upstream's applyPatches: the slice itself when no rule applies, else a copy with the rules' taints. */
    private ResourceSlice applyRules(ResourceSlice slice) {
        ResourceSlice result = slice;
        String driver = slice.getSpec() == null ? null : slice.getSpec().getDriver();
        String pool = slice.getSpec() == null || slice.getSpec().getPool() == null ? null : slice.getSpec().getPool().getName();
        List<DeviceTaintRule> all = new ArrayList<>(rules.list());
        all.sort(Comparator.comparing(r -> r.getMetadata().getName()));
        for (DeviceTaintRule rule : all) {
            if (rule.getSpec() == null || rule.getSpec().getTaint() == null) {
                continue;
            }
            DeviceTaintSelector selector = rule.getSpec().getDeviceSelector();
            String deviceName = null;
            if (selector != null) {
                if (selector.getDriver() != null && !selector.getDriver().equals(driver)) {
                    continue;
                }
                if (selector.getPool() != null && !selector.getPool().equals(pool)) {
                    continue;
                }
                deviceName = selector.getDevice();
                if (selector.getDeviceClassName() != null) {
                    DeviceClass deviceClass = classes.getByKey(selector.getDeviceClassName());
                    if (deviceClass == null) {
                        continue;
                    }
                    if (deviceClass.getSpec() != null && deviceClass.getSpec().getSelectors() != null
                            && deviceClass.getSpec().getSelectors().stream().anyMatch(s -> s.getCel() != null)) {
                        warnCel(rule);
                        continue;
                    }
                }
                if (selector.getSelectors() != null && selector.getSelectors().stream().anyMatch(s -> s.getCel() != null)) {
                    warnCel(rule);
                    continue;
                }
            }
            List<Device> devices = devices(slice);
            for (int i = 0; i < devices.size(); i++) {
                if (deviceName != null && !deviceName.equals(devices.get(i).getName())) {
                    continue;
                }
                var t = rule.getSpec().getTaint();
                DeviceTaint taint = new DeviceTaint(t.getEffect(), t.getKey(), t.getTimeAdded(), t.getValue());
                if (result == slice) {
                    result = DeepCopy.of(slice);
                }
                Device device = result.getSpec().getDevices().get(i);
                List<DeviceTaint> taints = device.getTaints() == null ? new ArrayList<>() : new ArrayList<>(device.getTaints());
                taints.add(taint);
                device.setTaints(taints);
            }
        }
        return result;
    }

    private void warnCel(DeviceTaintRule rule) {
        Long generation = rule.getMetadata().getGeneration();
        if (!Objects.equals(celWarned.put(rule.getMetadata().getName(), generation), generation)) {
            LOG.warnf("DeviceTaintRule %s uses a CEL selector, which qkcm does not evaluate: it applies to no device",
                    rule.getMetadata().getName());
        }
    }

    /** Upstream's taintsEqual over two devices' lists, in order. */
    static boolean taintsEqual(List<DeviceTaint> a, List<DeviceTaint> b) {
        List<DeviceTaint> x = a == null ? List.of() : a;
        List<DeviceTaint> y = b == null ? List.of() : b;
        if (x.size() != y.size()) {
            return false;
        }
        for (int i = 0; i < x.size(); i++) {
            DeviceTaint p = x.get(i);
            DeviceTaint q = y.get(i);
            if (!Objects.equals(p.getKey(), q.getKey()) || !Objects.equals(p.getEffect(), q.getEffect())
                    || !Objects.equals(p.getValue(), q.getValue())
                    || !Objects.equals(Times.parse(p.getTimeAdded()), Times.parse(q.getTimeAdded()))) {
                return false;
            }
        }
        return true;
    }
}
