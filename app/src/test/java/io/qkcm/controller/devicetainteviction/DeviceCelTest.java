package io.qkcm.controller.devicetainteviction;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.resource.v1beta2.Device;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceCapacityBuilder;

/**
 * The device selector CEL against upstream's table (k8s.io/dynamic-resource-allocation/cel compile_test.go):
 * compile errors, runtime errors in cel-go's words, the driver as default attribute domain, the empty map for
 * a domain the device lacks, quantity and semver functions, cel.bind, allowMultipleAllocations with and
 * without DRAConsumableCapacity. The other libraries' cases are DeviceCelLibrariesTest's.
 */
class DeviceCelTest {

    private static final DeviceCel CEL = new DeviceCel(false);
    private static final DeviceCel CONSUMABLE = new DeviceCel(true);

    static DeviceAttribute bool(boolean b) {
        return new DeviceAttributeBuilder().withBool(b).build();
    }

    static DeviceAttribute integer(long i) {
        return new DeviceAttributeBuilder().withInt(i).build();
    }

    static DeviceAttribute string(String s) {
        return new DeviceAttributeBuilder().withString(s).build();
    }

    static DeviceAttribute version(String v) {
        return new DeviceAttributeBuilder().withVersion(v).build();
    }

    static DeviceCapacity capacity(String q) {
        return new DeviceCapacityBuilder().withValue(new io.fabric8.kubernetes.api.model.Quantity(q)).build();
    }

    static Device device(Map<String, DeviceAttribute> attributes, Map<String, DeviceCapacity> capacity) {
        Device d = new Device();
        d.setName("d");
        d.setAttributes(attributes);
        d.setCapacity(capacity);
        return d;
    }

    static DeviceCel.Result eval(DeviceCel cel, String expression, String driver, Device device) {
        DeviceCel.Compiled c = cel.compile(expression);
        assertThat(c.error()).as(expression).isNull();
        assertThat(c.unsupported()).as(expression).isEmpty();
        return DeviceCel.matches(c, driver, device);
    }

    static void matches(String expression, String driver, Map<String, DeviceAttribute> attributes,
            Map<String, DeviceCapacity> capacity, boolean expected) {
        DeviceCel.Result r = eval(CEL, expression, driver, device(attributes, capacity));
        assertThat(r.error()).as(expression).isNull();
        assertThat(r.matches()).as(expression).isEqualTo(expected);
    }

    @Test
    void literalsMatchOrNot() {
        matches("true", "", Map.of(), Map.of(), true);
        matches("false", "", Map.of(), Map.of(), false);
    }

    @Test
    void compileErrors() {
        // cel-go words it "Syntax error: extraneous input ..."; the compile error is only logged
        assertThat(CEL.compile("?!").error()).contains("extraneous input '?'");
        assertThat(CEL.compile("1").error()).contains("must evaluate to bool or the unknown type, not int");
        assertThat(CEL.compile("invalid").error()).contains("undeclared reference to 'invalid'");
        assertThat(CEL.compile("device.allowMultipleAllocations == false").error())
                .contains("undefined field 'allowMultipleAllocations'");
    }

    @Test
    void runtimeErrorsAreCelGos() {
        for (String e : new String[] {
                "device.attributes[\"no-such-domain\"].noSuchAttr.isGreaterThan(quantity(\"0\"))",
                "device.attributes[\"no-such-domain\"][\"noSuchAttr\"].isGreaterThan(quantity(\"0\"))" }) {
            DeviceCel.Result r = eval(CEL, e, "", device(Map.of(), Map.of()));
            assertThat(r.matches()).isFalse();
            assertThat(r.error()).as(e).isEqualTo("no such key: noSuchAttr");
        }
    }

    @Test
    void domainsAndDriver() {
        matches("\"no-such-domain\" in device.attributes", "", Map.of(), Map.of(), false);
        matches("\"dra.example.com\" in device.attributes", "", Map.of("dra.example.com/something", bool(true)), Map.of(), true);
        matches("device.driver == \"\"", "", Map.of(), Map.of(), true);
        matches("device.driver == \"dra.example.com\"", "dra.example.com", Map.of(), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].name", "dra.example.com", Map.of("name", bool(true)), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"][\"name\"]", "dra.example.com", Map.of("name", bool(true)), Map.of(), true);
        matches("cel.bind(dra, device.attributes[\"dra.example.com\"], dra.name)", "dra.example.com",
                Map.of("name", bool(true)), Map.of(), true);
        matches("device.attributes[\"other.example.com\"].name", "dra.example.com",
                Map.of("other.example.com/name", bool(true)), Map.of(), true);
    }

    @Test
    void attributeTypes() {
        String d = "dra.example.com";
        matches("device.attributes[\"dra.example.com\"].name", d, Map.of("name", bool(true)), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].name > 0", d, Map.of("name", integer(1)), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].name == \"fish\"", d, Map.of("name", string("fish")), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"0.0.1\"))", d,
                Map.of("name", version("1.0.0")), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"v0.0.1\", true)) && isSemver(\"v1.0.0\", true)",
                d, Map.of("name", version("1.0.0")), Map.of(), true);
        matches("device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))", d, Map.of(),
                Map.of("name", capacity("1Mi")), true);
        matches("\"name\" in device.capacity[\"dra.example.com\"] && device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
                d, Map.of(), Map.of("name", capacity("1Mi")), true);
        matches("!(\"name\" in device.capacity[\"dra.example.com\"]) || device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
                d, Map.of(), Map.of(), true);
        Map<String, DeviceAttribute> all = new LinkedHashMap<>();
        all.put("bool", bool(true));
        all.put("int", integer(1));
        all.put("string", string("fish"));
        all.put("version", version("1.0.0"));
        matches("""
                device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
                device.attributes["dra.example.com"].bool &&
                device.attributes["dra.example.com"].int > 0 &&
                device.attributes["dra.example.com"].string == "fish" &&
                device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
                device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
                device.attributes["dra.example.com"]["bool"] &&
                device.attributes["dra.example.com"]["int"] > 0 &&
                device.attributes["dra.example.com"]["string"] == "fish" &&
                device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
                """, d, all, Map.of("quantity", capacity("1Mi")), true);
        matches("device.attributes[\"dra.example.com\"].a && device.attributes[\"dra.example.com\"].b && device.attributes[\"dra.example.com\"].c",
                d, Map.of("a", bool(true), "b", bool(true), "c", bool(true)), Map.of(), true);
    }

    @Test
    void macrosOverDomainsAndIds() {
        String d = "dra.example.com";
        matches("device.attributes.exists_one(x, x == \"dra.example.com\")", d, Map.of("services", string("x")), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].exists_one(x, x == \"services\")", d,
                Map.of("services", string("x")), Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].services.matches(\"[^a]?sym\")", d,
                Map.of("services", string("asymetric")), Map.of(), true);
        matches("device.capacity.exists_one(x, x == \"dra.example.com\")", d, Map.of(), Map.of("memory", capacity("1Mi")), true);
        matches("device.capacity[\"dra.example.com\"].exists_one(x, x == \"memory\")", d, Map.of(),
                Map.of("memory", capacity("1Mi")), true);
    }

    @Test
    void quantityAndSemverLibraries() {
        String d = "dra.example.com";
        Map<String, DeviceCapacity> mem = Map.of("memory", capacity("1500m"));
        matches("device.capacity[\"dra.example.com\"].memory == quantity(\"1.5\")", d, Map.of(), mem, true);
        matches("!device.capacity[\"dra.example.com\"].memory.isInteger()", d, Map.of(), mem, true);
        // resource.Quantity keeps 1500m+500m as 2000m (scale -3): not an int64 to AsInt64
        assertThat(eval(CEL, "device.capacity[\"dra.example.com\"].memory.add(quantity(\"500m\")).asInteger() == 2", d,
                device(Map.of(), mem)).error()).isEqualTo("cannot convert value to integer");
        matches("quantity(\"50k\").add(20).sub(quantity(\"100k\")).asInteger() == -49980", d, Map.of(), mem, true);
        matches("quantity(\"50k\").add(20).sub(quantity(\"100k\")).sub(-50000).asInteger() == 20", d, Map.of(), mem, true);
        matches("quantity(\"50k\").sub(quantity(\"20\")) == quantity(\"49.98k\")", d, Map.of(), mem, true);
        matches("!quantity(\"9999999999999999999999999999999999999G\").isInteger() && quantity(\"50\").isInteger()", d,
                Map.of(), mem, true);
        // upstream declares sign as a global function only
        matches("sign(device.capacity[\"dra.example.com\"].memory.sub(2)) == -1", d, Map.of(), mem, true);
        assertThat(CEL.compile("device.capacity[\"dra.example.com\"].memory.sign() == -1").error())
                .contains("found no matching overload for 'sign'");
        matches("device.capacity[\"dra.example.com\"].memory.compareTo(quantity(\"1.5\")) == 0", d, Map.of(), mem, true);
        matches("device.capacity[\"dra.example.com\"].memory.asApproximateFloat() == 1.5", d, Map.of(), mem, true);
        matches("isQuantity(\"1Gi\") && !isQuantity(\"1Gx\")", d, Map.of(), mem, true);
        Map<String, DeviceAttribute> v = Map.of("v", version("1.2.3-alpha.1+build"));
        matches("device.attributes[\"dra.example.com\"].v == semver(\"1.2.3-alpha.1\")", d, v, Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].v.isLessThan(semver(\"1.2.3\"))", d, v, Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].v.isGreaterThan(semver(\"1.2.3-alpha.beta\")) == false", d, v, Map.of(), true);
        matches("device.attributes[\"dra.example.com\"].v.major() == 1 && device.attributes[\"dra.example.com\"].v.minor() == 2"
                + " && device.attributes[\"dra.example.com\"].v.patch() == 3", d, v, Map.of(), true);
        matches("semver(\"v01.2\", true).compareTo(semver(\"1.2.0\")) == 0 && !isSemver(\"01.2.3\")", d, v, Map.of(), true);
        DeviceCel.Result r = eval(CEL, "sign(quantity(\"1Gx\")) == 1", d, device(Map.of(), Map.of()));
        assertThat(r.error()).isEqualTo(io.qkcm.controller.util.GoQuantity.ERR_FORMAT_WRONG);
        r = eval(CEL, "device.capacity[\"dra.example.com\"].memory.asInteger() == 1", d, device(Map.of(), mem));
        assertThat(r.error()).isEqualTo("cannot convert value to integer");
    }

    @Test
    void anAttributeThatIsNoSemverIsAnError() {
        DeviceCel.Result r = eval(CEL, "true", "dra.example.com", device(Map.of("v", version("1.0")), Map.of()));
        assertThat(r.matches()).isFalse();
        assertThat(r.error()).isEqualTo("attribute v: parse semantic version: No Major.Minor.Patch elements found");
    }

    @Test
    void allowMultipleAllocationsWithConsumableCapacity() {
        Device d = device(Map.of(), Map.of());
        assertThat(eval(CONSUMABLE, "device.allowMultipleAllocations == false", "dra.example.com", d).matches()).isTrue();
        d.setAdditionalProperty("allowMultipleAllocations", true);
        assertThat(eval(CONSUMABLE, "device.allowMultipleAllocations == true", "dra.example.com", d).matches()).isTrue();
    }

    @Test
    void standardLibrary() {
        matches("timestamp(\"2024-01-01T00:00:30Z\").getSeconds(\"UTC\") == 30 && 1u < 2 && dyn(1) == 1.0", "d", Map.of(),
                Map.of(), true);
        matches("device.attributes[\"d\"].n == 3.0 && [1, 2, 3].filter(x, x > 1).size() == 2", "d",
                Map.of("n", integer(3)), Map.of(), true);
        assertThat(eval(CEL, "1 / 0 == 1", "d", device(Map.of(), Map.of())).error()).isEqualTo("division by zero");
    }
}
