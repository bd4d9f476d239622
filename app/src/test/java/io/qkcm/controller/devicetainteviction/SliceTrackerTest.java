package io.qkcm.controller.devicetainteviction;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintRuleBuilder;
import io.fabric8.kubernetes.api.model.resource.v1alpha3.DeviceTaintSelectorBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceClassSpecBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceSliceSpecBuilder;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.qkcm.controller.util.resource.DeviceClass;
import io.qkcm.controller.util.resource.ResourceSlice;
import io.qkcm.runtime.events.EventRecorder;

/**
 * The tracker's CEL selectors against upstream's tracker_test.go cases: a rule selecting by
 * {@code device.driver} taints that driver's slice only ("add-attribute-for-selector"); selectors that do
 * not all match taint nothing; a runtime error skips the device with a CELRuntimeError event on the rule; an
 * expression that does not compile leaves the slice unpatched (no handler event); a DeviceClass's selectors
 * apply too ("add-taint-for-device-class", "filter-all-criteria").
 */
class SliceTrackerTest {

    static final String DRIVER1 = "driver1.example.com";
    static final String DRIVER2 = "driver2.example.com";

    /** A map-backed store: the tracker only reads its stores. */
    static final class MapStore<T extends HasMetadata> implements Store<T> {
        final Map<String, T> items = new LinkedHashMap<>();

        void add(T t) {
            items.put(t.getMetadata().getName(), t);
        }

        @Override
        public List<T> list() {
            return new ArrayList<>(items.values());
        }

        @Override
        public List<String> listKeys() {
            return new ArrayList<>(items.keySet());
        }

        @Override
        public T get(T t) {
            return items.get(t.getMetadata().getName());
        }

        @Override
        public T getByKey(String key) {
            return items.get(key);
        }

        @Override
        public String getKey(T t) {
            return t.getMetadata().getName();
        }
    }

    record Recorded(String object, String type, String reason, String message) {
    }

    final MapStore<ResourceSlice> slices = new MapStore<>();
    final MapStore<DeviceTaintRule> rules = new MapStore<>();
    final MapStore<DeviceClass> classes = new MapStore<>();
    final Map<String, ResourceSlice> patched = new LinkedHashMap<>();
    final List<Recorded> events = new ArrayList<>();
    final EventRecorder recorder = (object, type, reason, message) -> events
            .add(new Recorded(object.getMetadata().getName(), type, reason, message));
    final SliceTracker tracker = new SliceTracker(slices, rules, classes, (o, n) -> {
        if (n != null) {
            patched.put(n.getMetadata().getName(), n);
        }
    }, new DeviceCel(false), recorder);

    static ResourceSlice slice(String name, String driver, String pool, String... devices) {
        ResourceSlice s = new ResourceSlice();
        s.setMetadata(new ObjectMetaBuilder().withName(name).build());
        var spec = new ResourceSliceSpecBuilder().withDriver(driver).withNewPool().withName(pool).withGeneration(1L)
                .withResourceSliceCount(1L).endPool().withNodeName("worker");
        for (String d : devices) {
            spec.addToDevices(new DeviceBuilder().withName(d).build());
        }
        s.setSpec(spec.build());
        return s;
    }

    static DeviceTaintRuleBuilder rule(String name) {
        return new DeviceTaintRuleBuilder().withNewMetadata().withName(name).withGeneration(1L).endMetadata().withNewSpec()
                .withNewTaint().withKey("example.com/taint").withValue("tainted").withEffect("NoExecute").endTaint()
                .endSpec();
    }

    static DeviceTaintRule celRule(String name, String... expressions) {
        var selector = new DeviceTaintSelectorBuilder();
        for (String e : expressions) {
            selector.addNewSelector().withNewCel().withExpression(e).endCel().endSelector();
        }
        return rule(name).editSpec().withDeviceSelector(selector.build()).endSpec().build();
    }

    static DeviceClass deviceClass1() {
        DeviceClass c = new DeviceClass();
        c.setMetadata(new ObjectMetaBuilder().withName("device-class-1").build());
        c.setSpec(new DeviceClassSpecBuilder().addNewSelector().withNewCel()
                .withExpression("device.driver == \"" + DRIVER1 + "\"").endCel().endSelector().build());
        return c;
    }

    void sync() {
        for (String name : slices.listKeys()) {
            tracker.sliceChanged(name);
        }
    }

    List<String> taintKeys(String slice, int device) {
        var d = SliceTracker.devices(patched.get(slice)).get(device);
        return d.getTaints() == null ? List.of() : d.getTaints().stream().map(t -> t.getKey()).toList();
    }

    @Test
    void aSelectorOnTheDriverTaintsThatDriversSliceOnly() {
        rules.add(celRule("rule", "device.driver == \"" + DRIVER1 + "\""));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        slices.add(slice("slice2", DRIVER2, "pool2", "device2"));
        sync();
        assertThat(taintKeys("slice1", 0)).containsExactly("example.com/taint");
        assertThat(taintKeys("slice2", 0)).isEmpty();
    }

    @Test
    void allSelectorsMustMatch() {
        rules.add(celRule("rule", "true", "false", "true"));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        sync();
        assertThat(taintKeys("slice1", 0)).isEmpty();
        assertThat(events).isEmpty();
    }

    @Test
    void aRuntimeErrorSkipsTheDeviceWithAnEvent() {
        rules.add(celRule("rule", "device.attributes[\"test.example.com\"].deviceAttr"));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        sync();
        assertThat(taintKeys("slice1", 0)).isEmpty();
        assertThat(events).containsExactly(new Recorded("rule", "Warning", "CELRuntimeError",
                "selector #0: runtime error: no such key: deviceAttr"));
    }

    @Test
    void anExpressionThatDoesNotCompileLeavesTheSliceUnpatched() {
        rules.add(celRule("rule", "invalid"));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        sync();
        assertThat(patched).isEmpty();
        // a slice with no device never reaches the selector
        slices.add(slice("slice0", DRIVER1, "pool1"));
        sync();
        assertThat(patched).containsOnlyKeys("slice0");
    }

    @Test
    void theDeviceClassesSelectorsApply() {
        classes.add(deviceClass1());
        rules.add(rule("rule").editSpec().withNewDeviceSelector().withDeviceClassName("device-class-1").endDeviceSelector()
                .endSpec().build());
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        slices.add(slice("slice2", DRIVER2, "pool2", "device2"));
        sync();
        assertThat(taintKeys("slice1", 0)).containsExactly("example.com/taint");
        assertThat(taintKeys("slice2", 0)).isEmpty();
    }

    @Test
    void allCriteriaFilter() {
        classes.add(deviceClass1());
        rules.add(rule("rule").editSpec().withNewDeviceSelector().withDeviceClassName("device-class-1").withDriver(DRIVER1)
                .withPool("pool1").withDevice("device1").addNewSelector().withNewCel().withExpression("true").endCel()
                .endSelector().endDeviceSelector().endSpec().build());
        slices.add(slice("slice1", DRIVER1, "pool1", "device1", "device0"));
        slices.add(slice("slice2", DRIVER2, "pool2", "device2"));
        sync();
        assertThat(taintKeys("slice1", 0)).containsExactly("example.com/taint");
        assertThat(taintKeys("slice1", 1)).isEmpty();
        assertThat(taintKeys("slice2", 0)).isEmpty();
    }

    @Test
    void aFunctionNotEvaluatedHereAppliesTheRuleToNoDevice() {
        rules.add(celRule("rule", "isURL(\"https://\" + device.driver)"));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        sync();
        assertThat(taintKeys("slice1", 0)).isEmpty();
        assertThat(events).isEmpty();
    }

    @Test
    void aStringsLibraryFunctionIsEvaluated() {
        rules.add(celRule("rule", "device.driver.split(\".\").size() > 1"));
        slices.add(slice("slice1", DRIVER1, "pool1", "device1"));
        sync();
        assertThat(taintKeys("slice1", 0)).containsExactly("example.com/taint");
    }
}
