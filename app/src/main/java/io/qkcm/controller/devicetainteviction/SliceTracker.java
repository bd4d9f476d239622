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
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's resourceslice tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker) with device
 * taints on: each ResourceSlice as the controller sees it, with the taints of every DeviceTaintRule that
 * selects a device appended to that device's own. A slice event is always passed on; a rule or class event
 * passes a slice on only when its devices' taints changed.
 *
 * <p>CEL selectors of a rule, and of the DeviceClass it names, are evaluated per device ({@link DeviceCel}): a
 * device matches when all do. A selector that fails to compile fails the slice's sync (the slice keeps its
 * previous patched version, as upstream's returned error); a rule selector's runtime error is a
 * {@code CELRuntimeError} event on the rule, and the device does not match. A selector calling a function not
 * evaluated here applies the rule to no device (logged once per rule generation).
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
    private final DeviceCel cel;
    /** The tracker's own recorder (upstream's component resource_slice_tracker). */
    private final EventRecorder recorder;

    SliceTracker(Store<ResourceSlice> slices, Store<DeviceTaintRule> rules, Store<DeviceClass> classes,
            BiConsumer<ResourceSlice, ResourceSlice> handler, DeviceCel cel, EventRecorder recorder) {
        this.slices = slices;
        this.rules = rules;
        this.classes = classes;
        this.handler = handler;
        this.cel = cel;
        this.recorder = recorder;
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
        ResourceSlice newPatched;
        try {
            newPatched = applyRules(slice);
        } catch (CelCompileError e) {
            // upstream's handleError: the slice is left as it was patched before
            LOG.errorf("failed to apply patches to ResourceSlice: resourceslice %s: %s", name, e.getMessage());
            return;
        }
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

    /** A selector that does not compile: upstream's applyPatches returns an error. */
    static final class CelCompileError extends RuntimeException {
        CelCompileError(String message) {
            super(message);
        }
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
            List<DeviceCel.Compiled> classExprs = new ArrayList<>();
            List<DeviceCel.Compiled> selectorExprs = new ArrayList<>();
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
                    if (deviceClass.getSpec() != null && deviceClass.getSpec().getSelectors() != null) {
                        for (var s : deviceClass.getSpec().getSelectors()) {
                            if (s.getCel() != null) {
                                classExprs.add(cel.compile(s.getCel().getExpression()));
                            }
                        }
                    }
                }
                if (selector.getSelectors() != null) {
                    for (var s : selector.getSelectors()) {
                        if (s.getCel() != null) {
                            selectorExprs.add(cel.compile(s.getCel().getExpression()));
                        }
                    }
                }
            }
            List<Device> devices = devices(slice);
            devices:
            for (int i = 0; i < devices.size(); i++) {
                Device device = devices.get(i);
                if (deviceName != null && !deviceName.equals(device.getName())) {
                    continue;
                }
                for (int j = 0; j < classExprs.size(); j++) {
                    DeviceCel.Compiled expr = classExprs.get(j);
                    if (expr.error() != null) {
                        throw new CelCompileError("DeviceTaintRule " + rule.getMetadata().getName() + ": class "
                                + selector.getDeviceClassName() + ": selector #" + j + ": CEL compile error: " + expr.error());
                    }
                    if (!expr.unsupported().isEmpty()) {
                        warnCel(rule, expr);
                        continue devices;
                    }
                    DeviceCel.Result r = DeviceCel.matches(expr, driver, device);
                    if (r.error() != null || !r.matches()) {
                        continue devices;
                    }
                }
                for (int j = 0; j < selectorExprs.size(); j++) {
                    DeviceCel.Compiled expr = selectorExprs.get(j);
                    if (expr.error() != null) {
                        throw new CelCompileError("DeviceTaintRule " + rule.getMetadata().getName() + ": selector #" + j
                                + ": CEL compile error: " + expr.error());
                    }
                    if (!expr.unsupported().isEmpty()) {
                        warnCel(rule, expr);
                        continue devices;
                    }
                    DeviceCel.Result r = DeviceCel.matches(expr, driver, device);
                    if (r.error() != null) {
                        recorder.eventf(rule, EventRecorder.WARNING, "CELRuntimeError", "selector #%d: runtime error: %s", j,
                                r.error());
                        continue devices;
                    }
                    if (!r.matches()) {
                        continue devices;
                    }
                }
                var t = rule.getSpec().getTaint();
                DeviceTaint taint = new DeviceTaint(t.getEffect(), t.getKey(), t.getTimeAdded(), t.getValue());
                if (result == slice) {
                    result = DeepCopy.of(slice);
                }
                Device patchedDevice = result.getSpec().getDevices().get(i);
                List<DeviceTaint> taints = patchedDevice.getTaints() == null ? new ArrayList<>()
                        : new ArrayList<>(patchedDevice.getTaints());
                taints.add(taint);
                patchedDevice.setTaints(taints);
            }
        }
        return result;
    }

    private void warnCel(DeviceTaintRule rule, DeviceCel.Compiled expr) {
        Long generation = rule.getMetadata().getGeneration();
        if (!Objects.equals(celWarned.put(rule.getMetadata().getName(), generation), generation)) {
            LOG.warnf("DeviceTaintRule %s: the CEL selector %s calls %s, which qkcm does not evaluate: the rule applies "
                    + "to no device", rule.getMetadata().getName(), expr.expression(), expr.unsupported());
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
