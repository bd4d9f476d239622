package io.qkcm.controller.volume.common;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.FlexPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.FlexVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Volume;
import io.qkcm.runtime.Json;

/**
 * One FlexVolume driver as the controller manager sees it (upstream pkg/volume/flexvolume: plugin.go,
 * driver-call.go, attacher.go, detacher.go and their defaults), shared by the controllers that probe
 * {@code --flex-volume-plugin-dir} (attach/detach, selinux-warning): the executable
 * {@code <plugin dir>/<vendor~driver>/<driver>} is run as {@code <driver> <command> <args...>} and answers
 * one JSON object on its output ({@code status} Success, Failure or "Not supported", {@code message},
 * {@code device}, {@code attached}, {@code capabilities}). Its plugin name is the driver's name (the
 * directory name with {@code ~} for {@code /}); {@code init}'s capabilities say whether it attaches. A
 * command the driver answered "Not supported" is not run again: the plugin's default takes its place.
 */
public final class FlexVolumePlugin {

    /** What a driver call reads of pkg/volume's Spec: a pod's volume or a PersistentVolume. */
    public interface Spec {
        Volume volume();

        PersistentVolume persistentVolume();

        /** A PersistentVolume's read-only flag (from the pod's claim source). */
        boolean readOnly();

        /** Spec.Name(): the pod volume's name or the PV's. */
        String name();
    }

    /** SupportsSELinuxContextMount: a flex driver never mounts with an SELinux context (v1.34). */
    public static final boolean SUPPORTS_SELINUX_CONTEXT_MOUNT = false;

    public static final String INIT = "init";
    public static final String GET_VOLUME_NAME = "getvolumename";
    public static final String IS_ATTACHED = "isattached";
    public static final String ATTACH = "attach";
    public static final String DETACH = "detach";

    public static final String OPTION_FS_TYPE = "kubernetes.io/fsType";
    public static final String OPTION_READ_WRITE = "kubernetes.io/readwrite";
    public static final String OPTION_PV_OR_VOLUME_NAME = "kubernetes.io/pvOrVolumeName";

    public static final String STATUS_SUCCESS = "Success";
    public static final String STATUS_NOT_SUPPORTED = "Not supported";

    private static final Logger LOG = Logger.getLogger(FlexVolumePlugin.class);

    /** DriverCapabilities; a field the driver leaves out keeps defaultCapabilities' value. */
    public record Capabilities(boolean attach, boolean selinuxRelabel, boolean supportsMetrics, boolean fsGroup,
            boolean requiresFSResize) {
        public static final Capabilities DEFAULT = new Capabilities(true, true, false, true, true);
    }

    /** DriverStatus: a driver's answer. */
    public record DriverStatus(String status, String message, String devicePath, String volumeName, boolean attached,
            Capabilities capabilities, long actualVolumeSize) {
    }

    /** A driver call's error; {@link #notSupported()} for the driver's "Not supported". */
    public static final class DriverCallException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public DriverCallException(String message) {
            super(message);
        }

        public boolean notSupported() {
            return STATUS_NOT_SUPPORTED.equals(getMessage());
        }
    }

    private final String driverName;
    private final Path driverDir;
    private final Set<String> unsupportedCommands = new HashSet<>();
    private Capabilities capabilities = Capabilities.DEFAULT;

    private FlexVolumePlugin(String driverName, Path driverDir) {
        this.driverName = driverName;
        this.driverDir = driverDir;
    }

    /**
     * pluginFactory.NewFlexVolumePlugin: the driver in {@code pluginDir/dirName}, initialised by its
     * {@code init} call (whose error is thrown).
     */
    public static FlexVolumePlugin probe(Path pluginDir, String dirName) {
        FlexVolumePlugin plugin = new FlexVolumePlugin(unescapeQualifiedName(dirName), pluginDir.resolve(dirName));
        DriverStatus status = plugin.run(INIT, List.of());
        plugin.capabilities = status.capabilities();
        return plugin;
    }

    /** utilstrings.UnescapeQualifiedName. */
    public static String unescapeQualifiedName(String name) {
        return name.replace('~', '/');
    }

    /** GetPluginName: the driver's name. */
    public String name() {
        return driverName;
    }

    public Capabilities capabilities() {
        return capabilities;
    }

    /** Whether this plugin is upstream's flexVolumeAttachablePlugin (init said attach, or said nothing). */
    public boolean attachable() {
        return capabilities.attach();
    }

    /** getExecutable: the driver directory's file named as the driver name's last segment. */
    public Path executable() {
        String[] parts = driverName.split("/", -1);
        return driverDir.resolve(parts[parts.length - 1]);
    }

    /** CanSupport: the volume's flex driver is this one. */
    public boolean canSupport(Spec spec) {
        return spec != null && driverName.equals(driver(spec));
    }

    /** getDriver: the spec's flex driver, or null when it is no flex volume. */
    public static String driver(Spec spec) {
        if (spec.volume() != null && spec.volume().getFlexVolume() != null) {
            return spec.volume().getFlexVolume().getDriver();
        }
        FlexPersistentVolumeSource pv = pvSource(spec);
        return pv == null ? null : pv.getDriver();
    }

    private static FlexPersistentVolumeSource pvSource(Spec spec) {
        return spec.persistentVolume() == null || spec.persistentVolume().getSpec() == null ? null
                : spec.persistentVolume().getSpec().getFlexVolume();
    }

    /**
     * NewOptionsForDriver without extra options (the controller's calls pass none): fsType, readwrite
     * ("ro"/"rw": an inline volume's readOnly, a PV's from the claim), the spec's name, then the source's own
     * options, which win. Keys sorted, as Go marshals a map.
     */
    public static Map<String, String> optionsForDriver(Spec spec) {
        String fsType;
        boolean readOnly;
        Map<String, String> own;
        if (spec.volume() != null && spec.volume().getFlexVolume() != null) {
            FlexVolumeSource s = spec.volume().getFlexVolume();
            fsType = s.getFsType();
            readOnly = Boolean.TRUE.equals(s.getReadOnly());
            own = s.getOptions();
        } else if (pvSource(spec) != null) {
            FlexPersistentVolumeSource s = pvSource(spec);
            fsType = s.getFsType();
            readOnly = spec.readOnly();
            own = s.getOptions();
        } else {
            throw new DriverCallException("not a flex volume");
        }
        Map<String, String> options = new TreeMap<>();
        options.put(OPTION_FS_TYPE, fsType == null ? "" : fsType);
        options.put(OPTION_READ_WRITE, readOnly ? "ro" : "rw");
        options.put(OPTION_PV_OR_VOLUME_NAME, spec.name());
        if (own != null) {
            options.putAll(own);
        }
        return options;
    }

    public static String specJson(Spec spec) {
        try {
            return Json.mapper().writeValueAsString(optionsForDriver(spec));
        } catch (JsonProcessingException e) {
            throw new DriverCallException("failed to marshal spec, error: " + e.getMessage());
        }
    }

    // --- the controller's calls

    /**
     * GetVolumeName: the driver is asked (getvolumename), but the name is always the spec's: an error other
     * than "Not supported" fails it.
     */
    public String volumeName(Spec spec) {
        try {
            run(GET_VOLUME_NAME, List.of(specJson(spec)));
        } catch (DriverCallException e) {
            if (!e.notSupported()) {
                throw e;
            }
            LOG.debugf("flexVolume driver %s: using default GetVolumeName for volume %s", driverName, spec.name());
        }
        return spec.name();
    }

    /** flexVolumeAttacher.Attach: {@code attach <options> <node>}; the device path ("" by default). */
    public String attach(Spec spec, String nodeName) {
        try {
            return run(ATTACH, List.of(specJson(spec), nodeName)).devicePath();
        } catch (DriverCallException e) {
            if (!e.notSupported()) {
                throw e;
            }
            LOG.warnf("flexVolume driver %s: using default Attach for volume %s, host %s", driverName, spec.name(), nodeName);
            return "";
        }
    }

    /** flexVolumeDetacher.Detach: {@code detach <volume name> <node>} (nothing by default). */
    public void detach(String volumeName, String nodeName) {
        try {
            run(DETACH, List.of(volumeName, nodeName));
        } catch (DriverCallException e) {
            if (!e.notSupported()) {
                throw e;
            }
            LOG.warnf("flexVolume driver %s: using default Detach for volume %s, host %s", driverName, volumeName, nodeName);
        }
    }

    /**
     * flexVolumeAttacher.VolumesAreAttached: {@code isattached <options> <node>} per volume; null when the
     * driver does not support it (nothing is concluded), false for a volume it says is not attached.
     */
    public <S extends Spec> Map<S, Boolean> volumesAreAttached(List<S> specs, String nodeName) {
        Map<S, Boolean> checked = new java.util.IdentityHashMap<>();
        for (S spec : specs) {
            checked.put(spec, Boolean.TRUE);
            DriverStatus status;
            try {
                status = run(IS_ATTACHED, List.of(specJson(spec), nodeName));
            } catch (DriverCallException e) {
                if (e.notSupported()) {
                    return null;
                }
                throw e;
            }
            if (!status.attached()) {
                checked.put(spec, Boolean.FALSE);
                LOG.infof("VolumesAreAttached: check volume (\"%s\") is no longer attached", spec.name());
            }
        }
        return checked;
    }

    // --- the driver call (DriverCall.Run)

    public synchronized boolean isUnsupported(String command) {
        return unsupportedCommands.contains(command);
    }

    private synchronized void unsupported(String command) {
        unsupportedCommands.add(command);
    }

    /** Runs {@code <executable> <command> <args...>}; its combined output is the answer. */
    public DriverStatus run(String command, List<String> args) {
        if (isUnsupported(command)) {
            throw new DriverCallException(STATUS_NOT_SUPPORTED);
        }
        Path exec = executable();
        List<String> argv = new ArrayList<>();
        argv.add(exec.toString());
        argv.add(command);
        argv.addAll(args);
        String output;
        String execError = null;
        try {
            Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
            process.getOutputStream().close();
            output = readAll(process.getInputStream());
            int exit = process.waitFor();
            if (exit != 0) {
                execError = "exit status " + exit;
            }
        } catch (IOException e) {
            // Go's exec error for a missing or non-executable file; there is no output to read
            output = "";
            execError = "fork/exec " + exec + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverCallException("interrupted");
        }
        if (execError != null) {
            DriverStatus status;
            try {
                status = handleCmdResponse(command, output);
            } catch (DriverCallException e) {
                if (e.notSupported()) {
                    unsupported(command);
                } else {
                    LOG.warnf("FlexVolume: driver call failed: executable: %s, args: %s, error: %s, output: \"%s\"", exec,
                            goList(argv.subList(1, argv.size())), execError, output);
                }
                throw e;
            }
            LOG.errorf("FlexVolume: driver bug: %s: exec error (%s) but no error in response.", exec, execError);
            if (status != null) {
                throw new DriverCallException(execError);
            }
        }
        try {
            return handleCmdResponse(command, output);
        } catch (DriverCallException e) {
            if (e.notSupported()) {
                unsupported(command);
            }
            throw e;
        }
    }

    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String goList(List<String> values) {
        return "[" + String.join(" ", values) + "]";
    }

    /**
     * handleCmdResponse: the answer as Go's json.Unmarshal reads it into a DriverStatus whose capabilities
     * start as the defaults (keys matched case-insensitively, unknown keys ignored); not Success is an error,
     * "Not supported" its own.
     */
    public static DriverStatus handleCmdResponse(String command, String output) {
        JsonNode root;
        try {
            root = output.isBlank() ? null : Json.mapper().readTree(output);
        } catch (JsonProcessingException e) {
            root = null;
        }
        if (root == null || !root.isObject()) {
            String error = unmarshalError(output, root);
            LOG.errorf("Failed to unmarshal output for command: %s, output: \"%s\", error: %s", command, output, error);
            throw new DriverCallException(error);
        }
        String status = string(root, "status", "DriverStatus.status");
        String message = string(root, "message", "DriverStatus.message");
        String device = string(root, "device", "DriverStatus.device");
        String volumeName = string(root, "volumeName", "DriverStatus.volumeName");
        boolean attached = bool(root, "attached", "DriverStatus.attached", false);
        JsonNode caps = field(root, "capabilities");
        Capabilities capabilities = Capabilities.DEFAULT;
        if (caps != null && caps.isObject()) {
            Capabilities d = Capabilities.DEFAULT;
            capabilities = new Capabilities(bool(caps, "attach", "DriverCapabilities.attach", d.attach()),
                    bool(caps, "selinuxRelabel", "DriverCapabilities.selinuxRelabel", d.selinuxRelabel()),
                    bool(caps, "supportsMetrics", "DriverCapabilities.supportsMetrics", d.supportsMetrics()),
                    bool(caps, "fsGroup", "DriverCapabilities.fsGroup", d.fsGroup()),
                    bool(caps, "requiresFSResize", "DriverCapabilities.requiresFSResize", d.requiresFSResize()));
        } else if (caps != null && !caps.isNull()) {
            throw typeError(caps, "DriverStatus.Capabilities", "flexvolume.DriverCapabilities");
        }
        JsonNode size = field(root, "volumeNewSize");
        long actualSize = 0;
        if (size != null && !size.isNull()) {
            if (!size.isIntegralNumber()) {
                throw typeError(size, "DriverStatus.volumeNewSize", "int64");
            }
            actualSize = size.asLong();
        }
        if (STATUS_NOT_SUPPORTED.equals(status)) {
            LOG.debugf("%s command is not supported by the driver", command);
            throw new DriverCallException(STATUS_NOT_SUPPORTED);
        }
        if (!STATUS_SUCCESS.equals(status)) {
            String error = command + " command failed, status: " + status + ", reason: " + message;
            LOG.error(error);
            throw new DriverCallException(error);
        }
        return new DriverStatus(status, message, device, volumeName, attached, capabilities, actualSize);
    }

    /** encoding/json's errors for output that is no JSON object. */
    private static String unmarshalError(String output, JsonNode root) {
        String trimmed = output.strip();
        if (trimmed.isEmpty()) {
            return "unexpected end of JSON input";
        }
        if (root != null) {
            String kind = root.isArray() ? "array" : root.isTextual() ? "string" : root.isNumber() ? "number"
                    : root.isBoolean() ? "bool" : "null";
            return "json: cannot unmarshal " + kind + " into Go value of type flexvolume.DriverStatus";
        }
        char c = trimmed.charAt(0);
        if ("{[\"-0123456789tfn".indexOf(c) < 0) {
            return "invalid character '" + c + "' looking for beginning of value";
        }
        return "unexpected end of JSON input";
    }

    /** The object's field, its key matched case-insensitively as encoding/json does (an exact match first). */
    private static JsonNode field(JsonNode object, String name) {
        JsonNode exact = object.get(name);
        if (exact != null) {
            return exact;
        }
        for (Iterator<String> it = object.fieldNames(); it.hasNext();) {
            String key = it.next();
            if (key.equalsIgnoreCase(name)) {
                return object.get(key);
            }
        }
        return null;
    }

    private static String string(JsonNode object, String name, String goField) {
        JsonNode v = field(object, name);
        if (v == null || v.isNull()) {
            return "";
        }
        if (!v.isTextual()) {
            throw typeError(v, goField, "string");
        }
        return v.asText();
    }

    private static boolean bool(JsonNode object, String name, String goField, boolean dflt) {
        JsonNode v = field(object, name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw typeError(v, goField, "bool");
        }
        return v.asBoolean();
    }

    private static DriverCallException typeError(JsonNode v, String goField, String goType) {
        String kind = v.isTextual() ? "string" : v.isNumber() ? "number" : v.isBoolean() ? "bool"
                : v.isArray() ? "array" : "object";
        return new DriverCallException("json: cannot unmarshal " + kind + " into Go struct field " + goField + " of type "
                + goType);
    }
}
