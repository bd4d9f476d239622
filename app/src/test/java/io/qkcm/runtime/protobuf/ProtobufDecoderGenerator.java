package io.qkcm.runtime.protobuf;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.WireFormat;

/**
 * Writes the decoders of {@code io.qkcm.runtime.protobuf} from Kubernetes' protobuf descriptors (as the Go types
 * of k8s.io/api v0.34.4 register them, exported by hack/protobuf-fields) and fabric8's model classes: each proto
 * message reachable from a kind of {@link #ROOTS} is matched, field by field, to the fabric8 class that the
 * enclosing property's type names (proto field names are the JSON names, which are fabric8's
 * {@code @JsonProperty} names), and becomes a static method that reads a {@code CodedInputStream} and calls
 * the model's setters. Reflection happens here, at generation time only.
 * <p>
 * Run: {@code nice ./mvnw -B -ntp -o -pl app test -Dqkcm.control-plane.skip=true
 * -Dtest=ProtobufGeneratedSourcesTest -Dqkcm.protobuf.regenerate=true}
 * ({@link ProtobufGeneratedSourcesTest} without the property fails when the committed sources differ).
 */
final class ProtobufDecoderGenerator {

    static final String PACKAGE = "io.qkcm.runtime.protobuf";
    static final Path OUTPUT = Path.of("src/main/java/io/qkcm/runtime/protobuf");


    /** proto package, fabric8 package, apiVersion, kinds (each with its List). */
    private record Group(String protoPackage, String javaPackage, String apiVersion, List<String> kinds) {
    }

    private static final List<Group> ROOTS = List.of(
            new Group("k8s.io.api.core.v1", "io.fabric8.kubernetes.api.model", "v1",
                    List.of("Pod", "Node", "Service", "Endpoints", "Namespace", "ServiceAccount", "Secret",
                            "ConfigMap", "PersistentVolume", "PersistentVolumeClaim", "ResourceQuota",
                            "ReplicationController", "Event", "PodTemplate", "LimitRange")),
            new Group("k8s.io.api.apps.v1", "io.fabric8.kubernetes.api.model.apps", "apps/v1",
                    List.of("ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "ControllerRevision")),
            new Group("k8s.io.api.batch.v1", "io.fabric8.kubernetes.api.model.batch.v1", "batch/v1",
                    List.of("Job", "CronJob")),
            new Group("k8s.io.api.policy.v1", "io.fabric8.kubernetes.api.model.policy.v1", "policy/v1",
                    List.of("PodDisruptionBudget")),
            new Group("k8s.io.api.certificates.v1", "io.fabric8.kubernetes.api.model.certificates.v1",
                    "certificates.k8s.io/v1", List.of("CertificateSigningRequest")),
            new Group("k8s.io.api.autoscaling.v2", "io.fabric8.kubernetes.api.model.autoscaling.v2",
                    "autoscaling/v2", List.of("HorizontalPodAutoscaler")),
            new Group("k8s.io.api.storage.v1", "io.fabric8.kubernetes.api.model.storage", "storage.k8s.io/v1",
                    List.of("StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass")),
            new Group("k8s.io.api.rbac.v1", "io.fabric8.kubernetes.api.model.rbac", "rbac.authorization.k8s.io/v1",
                    List.of("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")),
            new Group("k8s.io.api.networking.v1", "io.fabric8.kubernetes.api.model.networking.v1",
                    "networking.k8s.io/v1", List.of("IPAddress", "ServiceCIDR", "Ingress", "NetworkPolicy")),
            new Group("k8s.io.api.scheduling.v1", "io.fabric8.kubernetes.api.model.scheduling.v1",
                    "scheduling.k8s.io/v1", List.of("PriorityClass")),
            new Group("k8s.io.api.discovery.v1", "io.fabric8.kubernetes.api.model.discovery.v1", "discovery.k8s.io/v1",
                    List.of("EndpointSlice")),
            new Group("k8s.io.api.coordination.v1", "io.fabric8.kubernetes.api.model.coordination.v1",
                    "coordination.k8s.io/v1", List.of("Lease")),
            new Group("k8s.io.api.events.v1", "io.fabric8.kubernetes.api.model.events.v1", "events.k8s.io/v1",
                    List.of("Event")),
            new Group("k8s.io.api.admissionregistration.v1", "io.fabric8.kubernetes.api.model.admissionregistration.v1",
                    "admissionregistration.k8s.io/v1", List.of("ValidatingAdmissionPolicy")));

    /**
     * Kinds qkcm's informers hold that are not generated: JSON for them. resource.k8s.io/v1: fabric8 7.4 has no
     * v1 model (qkcm reads these with its own classes, controller.util.resource).
     */
    static final Map<String, String> WITHOUT_DESCRIPTOR = new TreeMap<>(Map.of(
            "resource.k8s.io/v1/ResourceClaim", "not generated: no fabric8 v1 model (qkcm's own class)",
            "resource.k8s.io/v1/ResourceClaimTemplate", "not generated: no fabric8 v1 model (qkcm's own class)",
            "resource.k8s.io/v1/ResourceSlice", "not generated: no fabric8 v1 model (qkcm's own class)",
            "resource.k8s.io/v1/DeviceClass", "not generated: no fabric8 v1 model (qkcm's own class)"));

    private static final String META = "k8s.io.apimachinery.pkg.apis.meta.v1.";
    private static final String QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity";
    private static final String INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
    private static final String RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension";

    private final Map<String, Descriptor> messages = new HashMap<>();
    /** (message, class) pairs: their analysis result; null while in progress. */
    private final Map<Pair, String> problems = new HashMap<>();
    private final Map<Pair, Boolean> analysed = new LinkedHashMap<>();

    /** The "class" of a message fabric8 has no class for: JSON's untyped LinkedHashMap. */
    static final Class<?> UNTYPED = Map.class;

    record Pair(Descriptor message, Class<?> type) {
        String key() {
            return message.getFullName() + " -> " + type.getName();
        }
    }

    /** A fabric8 property: JSON name, setter, getter, the setter's parameter type. */
    record Property(String name, Method setter, Method getter, Type type) {
    }

    /**
     * The descriptors come from kubernetes-api.desc (app/src/test/resources, this package): the FileDescriptorSet
     * that hack/protobuf-fields writes from the Go types of the Kubernetes version qkcm follows (k8s.io/api
     * v0.34.4), dependencies first.
     */
    ProtobufDecoderGenerator() {
        try (java.io.InputStream in = ProtobufDecoderGenerator.class.getResourceAsStream("kubernetes-api.desc")) {
            Map<String, FileDescriptor> built = new HashMap<>();
            for (com.google.protobuf.DescriptorProtos.FileDescriptorProto file : com.google.protobuf.DescriptorProtos.FileDescriptorSet
                    .parseFrom(in).getFileList()) {
                FileDescriptor[] deps = file.getDependencyList().stream().map(built::get).toArray(FileDescriptor[]::new);
                FileDescriptor fd = FileDescriptor.buildFrom(file, deps);
                built.put(file.getName(), fd);
                collect(fd);
            }
        } catch (IOException | com.google.protobuf.Descriptors.DescriptorValidationException e) {
            throw new IllegalStateException("kubernetes-api.desc", e);
        }
    }

    private void collect(FileDescriptor file) {
        for (Descriptor d : file.getMessageTypes()) {
            messages.put(d.getFullName(), d);
        }
        for (FileDescriptor dep : file.getDependencies()) {
            collect(dep);
        }
    }

    public static void main(String[] args) throws IOException {
        Path out = args.length > 0 ? Path.of(args[0]) : OUTPUT;
        for (Map.Entry<String, String> file : new ProtobufDecoderGenerator().generate().entrySet()) {
            Files.writeString(out.resolve(file.getKey()), file.getValue());
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // the model side

    static Map<String, Property> properties(Class<?> type) {
        Map<String, Property> props = new LinkedHashMap<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                JsonProperty json = f.getAnnotation(JsonProperty.class);
                if (json == null || Modifier.isStatic(f.getModifiers()) || props.containsKey(json.value())) {
                    continue;
                }
                String cap = Character.toUpperCase(f.getName().charAt(0)) + f.getName().substring(1);
                Method setter = method(type, "set" + cap, f.getType());
                if (setter == null && f.getName().startsWith("_")) { // _default: setDefault
                    cap = Character.toUpperCase(f.getName().charAt(1)) + f.getName().substring(2);
                    setter = method(type, "set" + cap, f.getType());
                }
                Method getter = method(type, "get" + cap);
                if (getter == null) {
                    getter = method(type, "is" + cap);
                }
                if (setter != null) {
                    props.put(json.value(), new Property(json.value(), setter, getter, setter.getGenericParameterTypes()[0]));
                }
            }
        }
        return props;
    }

    private static Method method(Class<?> type, String name, Class<?>... params) {
        try {
            return type.getMethod(name, params);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static boolean hasAdditionalProperties(Class<?> type) {
        return method(type, "setAdditionalProperty", String.class, Object.class) != null
                && method(type, "getAdditionalProperties") != null;
    }

    private static boolean isModel(Type t) {
        return t instanceof Class<?> c && c.getName().startsWith("io.fabric8.kubernetes.api.model.")
                && !Modifier.isAbstract(c.getModifiers()) && !c.isInterface();
    }

    private static Class<?> raw(Type t) {
        return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
    }

    private static Type arg(Type t, int i) {
        return t instanceof ParameterizedType p ? p.getActualTypeArguments()[i] : null;
    }

    // ---------------------------------------------------------------------------------------------------
    // analysis: which pairs decode faithfully

    /** Null if the pair and everything it reaches decode faithfully, else why not. */
    String analyse(Pair pair) {
        if (analysed.containsKey(pair)) {
            return problems.get(pair); // a cycle in progress counts as fine; its own analysis decides
        }
        analysed.put(pair, Boolean.TRUE);
        String problem = null;
        Map<String, Property> props = properties(pair.type());
        for (FieldDescriptor f : pair.message().getFields()) {
            String p = analyseField(pair, f, props.get(jsonName(f)));
            if (p != null) {
                problem = pair.message().getName() + "." + f.getName() + ": " + p;
                break;
            }
        }
        problems.put(pair, problem);
        return problem;
    }

    private String analyseField(Pair pair, FieldDescriptor f, Property prop) {
        if (prop == null) {
            if (isInline(f)) {
                // an embedded struct JSON inlines (Volume's VolumeSource, Probe's ProbeHandler): its fields
                // are the enclosing object's properties
                return analyse(new Pair(f.getMessageType(), pair.type()));
            }
            if (pair.type() == UNTYPED || hasAdditionalProperties(pair.type())) {
                return analyseUntyped(f);
            }
            return "no property in " + pair.type().getSimpleName();
        }
        Type t = prop.type();
        owner = pair.type();
        ownerGetter = prop.getter() == null ? null : prop.getter().getName();
        if (f.isMapField()) {
            if (raw(t) != Map.class || arg(t, 0) != String.class) {
                return "map into " + t;
            }
            FieldDescriptor value = f.getMessageType().findFieldByNumber(2);
            return analyseValue(value, arg(t, 1));
        }
        if (f.isRepeated()) {
            if (raw(t) != List.class) {
                return "repeated into " + t;
            }
            return analyseValue(f, arg(t, 0));
        }
        return analyseValue(f, t);
    }

    /**
     * A field kept where fabric8 has no property: in additionalProperties, as JSON's untyped values
     * (LinkedHashMap, ArrayList, String, Integer/Long, Boolean, Double).
     */
    private String analyseUntyped(FieldDescriptor f) {
        FieldDescriptor value = f.isMapField() ? f.getMessageType().findFieldByNumber(2) : f;
        if (untypedRead(value) == null) {
            return "proto " + value.getType() + " " + (value.getType() == FieldDescriptor.Type.MESSAGE
                    ? value.getMessageType().getFullName() : "") + " has no untyped JSON form here";
        }
        if (value.getType() == FieldDescriptor.Type.MESSAGE && !isSpecial(value.getMessageType())
                && !isStringItems(value.getMessageType())) {
            return analyse(new Pair(value.getMessageType(), UNTYPED));
        }
        return null;
    }

    /** A Go embedded struct: go-to-protobuf names its field after the type (Probe's ProbeHandler: handler). */
    private static boolean isInline(FieldDescriptor f) {
        if (f.getType() != FieldDescriptor.Type.MESSAGE || f.isRepeated() || isSpecial(f.getMessageType())) {
            return false;
        }
        String type = f.getMessageType().getName();
        return f.getName().equals(Character.toLowerCase(type.charAt(0)) + type.substring(1))
                || f.getFullName().equals("k8s.io.api.core.v1.Probe.handler");
    }

    /** A Go named slice of strings (CSR's ExtraValue): a message with one repeated string "items". */
    private static boolean isStringItems(Descriptor m) {
        return m.getFields().size() == 1 && m.getFields().get(0).getName().equals("items")
                && m.getFields().get(0).isRepeated() && m.getFields().get(0).getType() == FieldDescriptor.Type.STRING;
    }

    /** The expression reading one value of {@code f} as JSON's untyped decoding would hold it; null if none. */
    private String untypedRead(FieldDescriptor f) {
        switch (f.getType()) {
            case STRING:
                return "Decoding.string(in)";
            case BOOL:
                return "in.readBool()";
            case INT32:
                return "in.readInt32()";
            case INT64:
                return "Decoding.untypedInteger(in.readInt64())";
            case DOUBLE:
                return "in.readDouble()";
            case BYTES:
                return "Decoding.base64(in)";
            case MESSAGE:
                Descriptor m = f.getMessageType();
                switch (m.getFullName()) {
                    case QUANTITY:
                        return "Decoding.quantity(in).toString()";
                    case INT_OR_STRING:
                        return "Decoding.intOrString(in).getValue()";
                    case META + "Time":
                        return "Decoding.time(in)";
                    case META + "MicroTime":
                        return "Decoding.microTime(in)";
                    case META + "Duration":
                        return "Decoding.duration(in)";
                    case META + "FieldsV1", RAW_EXTENSION:
                        return null;
                    default:
                        return isStringItems(m) ? "Decoding.stringItems(in)"
                                : className(m) + ".read" + methodName(new Pair(m, UNTYPED)) + "(in)";
                }
            default:
                return null;
        }
    }

    private String analyseValue(FieldDescriptor f, Type t) {
        return read(f, t) != null ? childProblem(f, t) : "proto " + f.getType() + " into " + t;
    }

    private String childProblem(FieldDescriptor f, Type t) {
        if (f.getType() == FieldDescriptor.Type.MESSAGE && !isSpecial(f.getMessageType())
                && !isStringItems(f.getMessageType())) {
            return analyse(new Pair(f.getMessageType(), (Class<?>) t));
        }
        return null;
    }

    private static boolean isSpecial(Descriptor d) {
        return switch (d.getFullName()) {
            case QUANTITY, INT_OR_STRING, RAW_EXTENSION, META + "Time", META + "MicroTime", META + "Duration",
                    META + "FieldsV1" -> true;
            default -> false;
        };
    }

    /** The class and getter of the property being read (a RawExtension into an Object property needs them). */
    private Class<?> owner;
    private String ownerGetter;

    /** The expression reading one value of {@code f} from {@code in} as a {@code t}; null if none faithful. */
    private String read(FieldDescriptor f, Type t) {
        String target = t == null ? "" : t.getTypeName();
        switch (f.getType()) {
            case STRING:
                return target.equals("java.lang.String") ? "Decoding.string(in)" : null;
            case BOOL:
                return target.equals("java.lang.Boolean") ? "in.readBool()" : null;
            case INT32:
                return switch (target) {
                    case "java.lang.Integer" -> "in.readInt32()";
                    case "java.lang.Long" -> "(long) in.readInt32()";
                    default -> null;
                };
            case INT64:
                return target.equals("java.lang.Long") ? "in.readInt64()" : null;
            case DOUBLE:
                return target.equals("java.lang.Double") ? "in.readDouble()" : null;
            case BYTES:
                return target.equals("java.lang.String") ? "Decoding.base64(in)" : null;
            case MESSAGE:
                Descriptor m = f.getMessageType();
                switch (m.getFullName()) {
                    case QUANTITY:
                        return target.equals("io.fabric8.kubernetes.api.model.Quantity") ? "Decoding.quantity(in)" : null;
                    case INT_OR_STRING:
                        return target.equals("io.fabric8.kubernetes.api.model.IntOrString") ? "Decoding.intOrString(in)"
                                : null;
                    case META + "Time":
                        return target.equals("java.lang.String") ? "Decoding.time(in)" : null;
                    case META + "MicroTime":
                        return switch (target) {
                            case "java.lang.String" -> "Decoding.microTime(in)";
                            case "io.fabric8.kubernetes.api.model.MicroTime" -> "Decoding.microTimeObject(in)";
                            case "java.time.ZonedDateTime" -> "Decoding.microTimeZoned(in)";
                            default -> null;
                        };
                    case META + "Duration":
                        return target.equals("java.lang.String") ? "Decoding.duration(in)" : null;
                    case META + "FieldsV1":
                        return target.equals("io.fabric8.kubernetes.api.model.FieldsV1") ? "Decoding.fieldsV1(in)" : null;
                    case RAW_EXTENSION:
                        if (t == Object.class && owner != null) {
                            // fabric8 keeps such a property as whatever its JSON decoding makes of it
                            String o = owner.getName().replace('$', '.');
                            return "Decoding.rawExtensionProperty(in, " + o + ".class, \"" + jsonName(f) + "\", " + o
                                    + "::" + ownerGetter + ")";
                        }
                        return t instanceof Class<?> c && t != Object.class
                                ? "Decoding.rawExtension(in, " + c.getName() + ".class)" : null;
                    default:
                        if (isStringItems(m)) {
                            return target.equals("java.util.List<java.lang.String>") ? "Decoding.stringItems(in)" : null;
                        }
                        return isModel(t) ? className(m) + ".read" + methodName(new Pair(m, (Class<?>) t)) + "(in)"
                                : null;
                }
            default:
                return null;
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // naming

    /** The generated class holding a proto package's decoders: k8s.io.api.core.v1 → CoreV1Proto. */
    static String className(Descriptor m) {
        String[] parts = m.getFile().getPackage().split("\\.");
        String a = parts[parts.length - 2];
        String b = parts[parts.length - 1];
        if (a.equals("pkg")) { // k8s.io.apimachinery.pkg.runtime
            a = "";
        }
        return cap(a) + cap(b) + "Proto";
    }

    private static String cap(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** A message's own name when its model class has the same simple name, else message_Class. */
    private static String methodName(Pair pair) {
        String base = pair.message().getName();
        if (pair.type() == UNTYPED) {
            return base + "_Untyped";
        }
        String simple = pair.type().getSimpleName();
        return simple.equals(base) ? base : base + "_" + simple;
    }

    // ---------------------------------------------------------------------------------------------------
    // output

    /** File name → Java source of every generated file. */
    Map<String, String> generate() {
        Map<String, Root> roots = new TreeMap<>();
        Map<String, String> notDecodable = new TreeMap<>(WITHOUT_DESCRIPTOR);
        for (Group g : ROOTS) {
            for (String kind : g.kinds()) {
                for (String k : List.of(kind, kind + "List")) {
                    Descriptor d = messages.get(g.protoPackage() + "." + k);
                    Class<?> type = load(g.javaPackage() + "." + k);
                    String key = g.apiVersion() + "/" + k;
                    if (d == null || type == null) {
                        notDecodable.put(key, d == null ? "no descriptor " + g.protoPackage() + "." + k
                                : "no fabric8 class " + g.javaPackage() + "." + k);
                        continue;
                    }
                    Pair pair = new Pair(d, type);
                    String problem = analyse(pair);
                    if (problem != null) {
                        notDecodable.put(key, problem);
                    } else {
                        roots.put(key, new Root(g.apiVersion(), k, pair));
                    }
                }
            }
        }
        Pair status = new Pair(messages.get(META + "Status"), io.fabric8.kubernetes.api.model.Status.class);
        if (analyse(status) == null) {
            roots.put("v1/Status", new Root("v1", "Status", status));
        } else {
            notDecodable.put("v1/Status", problems.get(status));
        }
        // a pair is generated when it is reachable from a decodable root (all such pairs are fine)
        Map<String, List<Pair>> byClass = new TreeMap<>();
        Map<String, Boolean> seen = new HashMap<>();
        for (Root r : roots.values()) {
            reach(r.pair(), byClass, seen);
        }
        Map<String, String> files = new TreeMap<>();
        for (Map.Entry<String, List<Pair>> e : byClass.entrySet()) {
            List<Pair> pairs = e.getValue();
            pairs.sort((x, y) -> methodName(x).compareTo(methodName(y)));
            files.put(e.getKey() + ".java", classSource(e.getKey(), pairs));
        }
        files.put("ProtobufDecoders.java", indexSource(roots, notDecodable));
        return files;
    }

    private record Root(String apiVersion, String kind, Pair pair) {
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    private void reach(Pair pair, Map<String, List<Pair>> byClass, Map<String, Boolean> seen) {
        if (seen.putIfAbsent(pair.key(), Boolean.TRUE) != null) {
            return;
        }
        byClass.computeIfAbsent(className(pair.message()), k -> new ArrayList<>()).add(pair);
        Map<String, Property> props = properties(pair.type());
        for (FieldDescriptor f : pair.message().getFields()) {
            Property prop = props.get(jsonName(f));
            FieldDescriptor value = f.isMapField() ? f.getMessageType().findFieldByNumber(2) : f;
            if (prop == null) {
                if (isInline(f)) {
                    Pair inline = new Pair(f.getMessageType(), pair.type());
                    inlinePairs.add(inline.key());
                    reach(inline, byClass, seen);
                } else if (value.getType() == FieldDescriptor.Type.MESSAGE && !isSpecial(value.getMessageType())
                        && !isStringItems(value.getMessageType())) {
                    reach(new Pair(value.getMessageType(), UNTYPED), byClass, seen);
                }
                continue;
            }
            Type t = f.isMapField() ? arg(prop.type(), 1) : f.isRepeated() ? arg(prop.type(), 0) : prop.type();
            if (value.getType() == FieldDescriptor.Type.MESSAGE && !isSpecial(value.getMessageType())
                    && !isStringItems(value.getMessageType())) {
                reach(new Pair(value.getMessageType(), (Class<?>) t), byClass, seen);
            }
        }
    }

    private static final String HEADER = """
            // GENERATED by ProtobufDecoderGenerator (app/src/test/java/io/qkcm/runtime/protobuf) from
            // Kubernetes' protobuf descriptors (hack/protobuf-fields) and fabric8's model classes. Do not edit:
            // ProtobufGeneratedSourcesTest fails when this differs from what the generator writes.
            """;

    private String classSource(String name, List<Pair> pairs) {
        StringBuilder s = new StringBuilder(HEADER);
        s.append("package ").append(PACKAGE).append(";\n\n");
        s.append("import java.io.IOException;\n\nimport com.google.protobuf.CodedInputStream;\n\n");
        s.append("/** Decoders of ").append(pairs.get(0).message().getFile().getPackage())
                .append(" messages into fabric8's model, and encoders back. */\n");
        s.append("final class ").append(name).append(" {\n\n    private ").append(name).append("() {\n    }\n");
        for (Pair p : pairs) {
            String type = p.type() == UNTYPED ? "java.util.Map<String, Object>" : p.type().getName().replace('$', '.');
            String m = methodName(p);
            boolean constructible = p.type() == UNTYPED || hasNoArgConstructor(p.type());
            if (constructible) {
                s.append("\n    static ").append(type).append(" read").append(m)
                        .append("(CodedInputStream in) throws IOException {\n");
                s.append("        int limit = Decoding.enter(in);\n");
                s.append("        ").append(type).append(" o = new ")
                        .append(p.type() == UNTYPED ? "java.util.LinkedHashMap<>" : type).append("();\n");
                s.append("        merge").append(m).append("(in, o);\n");
                s.append("        Decoding.leave(in, limit);\n        return o;\n    }\n");
            }
            s.append("\n    static void merge").append(m).append("(CodedInputStream in, ").append(type)
                    .append(" o) throws IOException {\n");
            Map<String, Property> props = properties(p.type());
            for (FieldDescriptor f : p.message().getFields()) {
                if (!nullWhenEmpty(f)) {
                    continue;
                }
                // JSON has null where protobuf has no element: the property starts null
                Property prop = props.get(jsonName(f));
                if (prop != null) {
                    s.append("        o.").append(prop.setter().getName()).append("(null);\n");
                } else if (!isInline(f)) {
                    s.append("        ").append(p.type() == UNTYPED ? "o" : "o.getAdditionalProperties()")
                            .append(".put(\"").append(jsonName(f)).append("\", null);\n");
                }
            }
            s.append("        for (int tag; (tag = in.readTag()) != 0;) {\n            switch (tag) {\n");
            for (FieldDescriptor f : p.message().getFields()) {
                fieldCases(s, p, f, props.get(jsonName(f)));
            }
            s.append("                default -> throw Decoding.unknownField(tag, \"")
                    .append(p.message().getFullName()).append("\");\n");
            s.append("            }\n        }\n    }\n");
            if (p.type() != UNTYPED) {
                writer(s, p);
            }
        }
        s.append("}\n");
        return s.toString();
    }

    private static boolean hasNoArgConstructor(Class<?> c) {
        try {
            c.getConstructor();
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static int tag(FieldDescriptor f, int wireType) {
        return f.getNumber() << 3 | wireType;
    }

    private static int wireType(FieldDescriptor f) {
        return switch (f.getType()) {
            case STRING, BYTES, MESSAGE -> WireFormat.WIRETYPE_LENGTH_DELIMITED;
            case DOUBLE, FIXED64, SFIXED64 -> WireFormat.WIRETYPE_FIXED64;
            case FLOAT, FIXED32, SFIXED32 -> WireFormat.WIRETYPE_FIXED32;
            default -> WireFormat.WIRETYPE_VARINT;
        };
    }

    private void fieldCases(StringBuilder s, Pair p, FieldDescriptor f, Property prop) {
        String comment = " // " + f.getName() + "\n";
        String indent = "                ";
        if (prop == null) {
            if (isInline(f)) {
                // inlined in JSON: its fields land on this object
                Pair inline = new Pair(f.getMessageType(), p.type());
                s.append(indent).append("case ").append(tag(f, WireFormat.WIRETYPE_LENGTH_DELIMITED)).append(" -> {")
                        .append(comment);
                s.append(indent).append("    int limit = Decoding.enter(in);\n");
                s.append(indent).append("    ").append(className(inline.message())).append(".merge")
                        .append(methodName(inline)).append("(in, o);\n");
                s.append(indent).append("    Decoding.leave(in, limit);\n");
                s.append(indent).append("}\n");
                return;
            }
            // no property: kept in additionalProperties as JSON decoding would keep it
            String container = p.type() == UNTYPED ? "o" : "o.getAdditionalProperties()";
            String name = "\"" + jsonName(f) + "\"";
            if (f.isMapField()) {
                FieldDescriptor value = f.getMessageType().findFieldByNumber(2);
                s.append(indent).append("case ").append(tag(f, WireFormat.WIRETYPE_LENGTH_DELIMITED)).append(" -> {")
                        .append(comment);
                s.append(indent).append("    int limit = Decoding.enter(in);\n");
                s.append(indent).append("    String key = \"\";\n");
                s.append(indent).append("    Object value = null;\n");
                s.append(indent).append("    for (int t; (t = in.readTag()) != 0;) {\n");
                s.append(indent).append("        switch (t) {\n");
                s.append(indent).append("            case 10 -> key = Decoding.string(in);\n");
                s.append(indent).append("            case ").append(tag(value, wireType(value))).append(" -> value = ")
                        .append(untypedRead(value)).append(";\n");
                s.append(indent).append("            default -> throw Decoding.unknownField(t, \"")
                        .append(f.getMessageType().getFullName()).append("\");\n");
                s.append(indent).append("        }\n");
                s.append(indent).append("    }\n");
                s.append(indent).append("    Decoding.leave(in, limit);\n");
                s.append(indent).append("    Decoding.putAdditional(").append(container).append(", ").append(name)
                        .append(", key, value);\n");
                s.append(indent).append("}\n");
                return;
            }
            s.append(indent).append("case ").append(tag(f, wireType(f))).append(" -> ");
            if (f.isRepeated()) {
                s.append("Decoding.addAdditional(").append(container).append(", ").append(name).append(", ")
                        .append(untypedRead(f)).append(");").append(comment);
            } else {
                if (omitsZero(f)) {
                    s.append("{").append(comment);
                    s.append(indent).append("    Object v = ").append(untypedRead(f)).append(";\n");
                    s.append(indent).append("    if (!Decoding.isZero(v)) {\n");
                    s.append(indent).append("        ").append(container).append(".put(").append(name).append(", v);\n");
                    s.append(indent).append("    }\n");
                    s.append(indent).append("}\n");
                } else {
                    s.append(container).append(".put(").append(name).append(", ").append(untypedRead(f)).append(");")
                            .append(comment);
                }
            }
            return;
        }
        String setter = prop.setter().getName();
        String getter = prop.getter().getName();
        owner = p.type();
        ownerGetter = getter;
        if (f.isMapField()) {
            FieldDescriptor value = f.getMessageType().findFieldByNumber(2);
            Type v = arg(prop.type(), 1);
            String vt = v.getTypeName().replace('$', '.');
            s.append(indent).append("case ").append(tag(f, WireFormat.WIRETYPE_LENGTH_DELIMITED)).append(" -> {")
                    .append(comment);
            s.append(indent).append("    int limit = Decoding.enter(in);\n");
            s.append(indent).append("    String key = \"\";\n");
            s.append(indent).append("    ").append(vt).append(" value = ").append(zero(value, v)).append(";\n");
            s.append(indent).append("    for (int t; (t = in.readTag()) != 0;) {\n");
            s.append(indent).append("        switch (t) {\n");
            s.append(indent).append("            case 10 -> key = Decoding.string(in);\n");
            s.append(indent).append("            case ").append(tag(value, wireType(value))).append(" -> value = ")
                    .append(read(value, v)).append(";\n");
            s.append(indent).append("            default -> throw Decoding.unknownField(t, \"")
                    .append(f.getMessageType().getFullName()).append("\");\n");
            s.append(indent).append("        }\n");
            s.append(indent).append("    }\n");
            s.append(indent).append("    Decoding.leave(in, limit);\n");
            s.append(indent).append("    java.util.Map<String, ").append(vt).append("> map = o.").append(getter)
                    .append("();\n");
            s.append(indent).append("    if (map == null) {\n");
            s.append(indent).append("        map = new java.util.LinkedHashMap<>();\n");
            s.append(indent).append("        o.").append(setter).append("(map);\n");
            s.append(indent).append("    }\n");
            s.append(indent).append("    map.put(key, value);\n");
            s.append(indent).append("}\n");
            return;
        }
        if (f.isRepeated()) {
            Type e = arg(prop.type(), 0);
            String et = e.getTypeName().replace('$', '.');
            String add = "java.util.List<" + et + "> list = o." + getter + "();\n"
                    + indent + "    if (list == null) {\n"
                    + indent + "        list = new java.util.ArrayList<>();\n"
                    + indent + "        o." + setter + "(list);\n"
                    + indent + "    }\n";
            s.append(indent).append("case ").append(tag(f, wireType(f))).append(" -> {").append(comment);
            if (f.getFullName().equals(META + "ObjectMeta.managedFields")) {
                // objects bound for an informer's cache skip them, as the JSON decoding does (CachedObjects)
                s.append(indent).append("    if (Decoding.skipsManagedFields()) {\n");
                s.append(indent).append("        o.").append(setter).append("(null);\n");
                s.append(indent).append("        in.skipField(tag);\n");
                s.append(indent).append("        break;\n");
                s.append(indent).append("    }\n");
            }
            s.append(indent).append("    ").append(add);
            s.append(indent).append("    list.add(").append(read(f, e)).append(");\n");
            s.append(indent).append("}\n");
            if (wireType(f) != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                // a packed encoding of the same repeated scalar (accepted by every protobuf reader)
                s.append(indent).append("case ").append(tag(f, WireFormat.WIRETYPE_LENGTH_DELIMITED))
                        .append(" -> {").append(comment);
                s.append(indent).append("    ").append(add);
                s.append(indent).append("    int limit = Decoding.enter(in);\n");
                s.append(indent).append("    while (!in.isAtEnd()) {\n");
                s.append(indent).append("        list.add(").append(read(f, e)).append(");\n");
                s.append(indent).append("    }\n");
                s.append(indent).append("    in.popLimit(limit);\n");
                s.append(indent).append("}\n");
            }
            return;
        }
        if (omitsZero(f)) {
            String t = prop.type().getTypeName();
            s.append(indent).append("case ").append(tag(f, wireType(f))).append(" -> {").append(comment);
            s.append(indent).append("    ").append(t).append(" v = ").append(read(f, prop.type())).append(";\n");
            s.append(indent).append("    if (").append(nonZero(f)).append(") {\n");
            s.append(indent).append("        o.").append(setter).append("(v);\n");
            s.append(indent).append("    }\n");
            s.append(indent).append("}\n");
            return;
        }
        s.append(indent).append("case ").append(tag(f, wireType(f))).append(" -> o.").append(setter).append("(")
                .append(read(f, prop.type())).append(");").append(comment);
    }

    /**
     * Whether the field is a non-pointer Go scalar with omitempty (hack/protobuf-fields lists them): gogo
     * writes its zero, encoding/json leaves it out, so its zero is skipped here too.
     */
    private static boolean omitsZero(FieldDescriptor f) {
        return !f.isRepeated() && f.getType() != FieldDescriptor.Type.MESSAGE
                && OMITEMPTY_SCALARS.contains(f.getContainingType().getFullName() + "\t" + f.getName());
    }

    private static String nonZero(FieldDescriptor f) {
        return switch (f.getType()) {
            case STRING, BYTES -> "!v.isEmpty()";
            case BOOL -> "v";
            case INT32 -> "v.intValue() != 0";
            case INT64 -> "v.longValue() != 0L";
            case DOUBLE -> "v.doubleValue() != 0.0";
            default -> throw new IllegalStateException(f.getFullName());
        };
    }

    /**
     * The field's JSON name: its proto name, except where go-to-protobuf took the Go field's name
     * (admissionregistration's Validation.Expression): hack/protobuf-fields lists those.
     */
    static String jsonName(FieldDescriptor f) {
        return JSON_NAMES.getOrDefault(f.getContainingType().getFullName() + "\t" + f.getName(), f.getName());
    }

    private static final Map<String, String> JSON_NAMES = jsonNames();

    private static Map<String, String> jsonNames() {
        Map<String, String> names = new HashMap<>();
        for (String field : goFields("json-name")) {
            // "message\tprotoName=jsonName"
            String[] kv = field.split("=", 2);
            names.put(kv[0], kv[1]);
        }
        return names;
    }

    /** hack/protobuf-fields' output: "message\tfield" of every non-pointer omitempty scalar of the API. */
    private static final java.util.Set<String> OMITEMPTY_SCALARS = goFields("omitempty-scalar");
    /** ... and of every slice or map without omitempty (JSON null when empty). */
    private static final java.util.Set<String> NULL_WHEN_EMPTY = goFields("null-when-empty");

    private static java.util.Set<String> goFields(String kind) {
        try (java.io.InputStream in = ProtobufDecoderGenerator.class.getResourceAsStream("go-fields.tsv")) {
            java.util.Set<String> fields = new java.util.HashSet<>();
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                String[] cols = line.split("\t");
                if (cols.length == 3 && cols[2].equals(kind)) {
                    fields.add(cols[0] + "\t" + cols[1]);
                } else if (cols.length == 4 && cols[2].equals(kind)) {
                    fields.add(cols[0] + "\t" + cols[1] + "=" + cols[3]);
                }
            }
            return fields;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Whether an absent repeated or map field is JSON's null (a Go slice or map without omitempty). A list's
     * items are the exception: the API server writes an empty list's items as [].
     */
    private static boolean nullWhenEmpty(FieldDescriptor f) {
        return (f.isRepeated() || f.getType() == FieldDescriptor.Type.BYTES)
                && !(f.getName().equals("items") && f.getContainingType().getName().endsWith("List"))
                && NULL_WHEN_EMPTY.contains(f.getContainingType().getFullName() + "\t" + f.getName());
    }

    /** Pairs reached through a JSON-inlined field: their class's other properties are another message's. */
    private final java.util.Set<String> inlinePairs = new java.util.HashSet<>();

    /** The encoder of a pair: fields in reverse order (ProtobufWriter writes back to front). */
    private void writer(StringBuilder s, Pair p) {
        String type = p.type().getName().replace('$', '.');
        s.append("\n    static void write").append(methodName(p)).append("(ProtobufWriter w, ").append(type)
                .append(" o) throws ProtobufEncodingException {\n");
        Map<String, Property> props = properties(p.type());
        if (!inlinePairs.contains(p.key())) {
            java.util.Set<String> covered = new java.util.HashSet<>(List.of("apiVersion", "kind"));
            coveredNames(p.message(), covered);
            for (Property prop : props.values()) {
                if (!covered.contains(prop.name()) && prop.getter() != null) {
                    s.append("        ProtobufWriter.mustBeEmpty(o.").append(prop.getter().getName()).append("(), \"")
                            .append(p.type().getSimpleName()).append(".").append(prop.name()).append("\");\n");
                }
            }
            if (hasAdditionalProperties(p.type())) {
                s.append("        ProtobufWriter.mustBeEmpty(o.getAdditionalProperties(), \"")
                        .append(p.type().getSimpleName()).append(".additionalProperties\");\n");
            }
        }
        List<FieldDescriptor> fields = new ArrayList<>(p.message().getFields());
        java.util.Collections.reverse(fields);
        String i = "        ";
        for (FieldDescriptor f : fields) {
            Property prop = props.get(jsonName(f));
            int n = f.getNumber();
            if (prop == null) {
                if (isInline(f)) {
                    Pair inline = new Pair(f.getMessageType(), p.type());
                    s.append(i).append("{ // ").append(f.getName()).append("\n");
                    s.append(i).append("    int m = w.mark();\n");
                    s.append(i).append("    ").append(className(inline.message())).append(".write")
                            .append(methodName(inline)).append("(w, o);\n");
                    s.append(i).append("    w.endMessage(").append(n).append(", m);\n");
                    s.append(i).append("}\n");
                }
                continue; // else from additionalProperties, which must be empty
            }
            String getter = prop.getter().getName();
            if (f.isMapField()) {
                FieldDescriptor value = f.getMessageType().findFieldByNumber(2);
                String vt = arg(prop.type(), 1).getTypeName().replace('$', '.');
                s.append(i).append("if (o.").append(getter).append("() != null) { // ").append(f.getName()).append("\n");
                s.append(i).append("    Object[] entries = o.").append(getter).append("().entrySet().toArray();\n");
                s.append(i).append("    for (int i = entries.length - 1; i >= 0; i--) {\n");
                s.append(i).append("        @SuppressWarnings(\"unchecked\")\n");
                s.append(i).append("        java.util.Map.Entry<String, ").append(vt)
                        .append("> e = (java.util.Map.Entry<String, ").append(vt).append(">) entries[i];\n");
                s.append(i).append("        int m = w.mark();\n");
                s.append(i).append("        ").append(vt).append(" v = e.getValue();\n");
                s.append(i).append("        if (v != null) {\n");
                s.append(i).append("            ").append(write(value, arg(prop.type(), 1))).append("\n");
                s.append(i).append("        }\n");
                s.append(i).append("        w.string(1, e.getKey());\n");
                s.append(i).append("        w.endMessage(").append(n).append(", m);\n");
                s.append(i).append("    }\n");
                s.append(i).append("}\n");
            } else if (f.isRepeated()) {
                String et = arg(prop.type(), 0).getTypeName().replace('$', '.');
                s.append(i).append("if (o.").append(getter).append("() != null) { // ").append(f.getName()).append("\n");
                s.append(i).append("    java.util.List<").append(et).append("> list = o.").append(getter).append("();\n");
                s.append(i).append("    for (int i = list.size() - 1; i >= 0; i--) {\n");
                s.append(i).append("        ").append(et).append(" v = list.get(i);\n");
                s.append(i).append("        if (v != null) {\n");
                s.append(i).append("            ").append(write(f, arg(prop.type(), 0))).append("\n");
                s.append(i).append("        }\n");
                s.append(i).append("    }\n");
                s.append(i).append("}\n");
            } else {
                String t = prop.type().getTypeName().replace('$', '.');
                s.append(i).append("{ // ").append(f.getName()).append("\n");
                s.append(i).append("    ").append(t).append(" v = o.").append(getter).append("();\n");
                s.append(i).append("    if (v != null) {\n");
                s.append(i).append("        ").append(write(f, prop.type())).append("\n");
                s.append(i).append("    }\n");
                s.append(i).append("}\n");
            }
        }
        s.append("    }\n");
    }

    /** The JSON names a message's fields give its class, inlined messages' fields included. */
    private static void coveredNames(Descriptor m, java.util.Set<String> names) {
        for (FieldDescriptor f : m.getFields()) {
            names.add(jsonName(f));
            if (isInline(f)) {
                coveredNames(f.getMessageType(), names);
            }
        }
    }

    /** The statement writing {@code v} (a {@code t}) as field {@code f}. */
    private String write(FieldDescriptor f, Type t) {
        int n = f.getNumber();
        switch (f.getType()) {
            case STRING:
                return "w.string(" + n + ", v);";
            case BOOL:
                return "w.bool(" + n + ", v);";
            case INT32, INT64:
                return "w.int64(" + n + ", v);";
            case DOUBLE:
                return "w.dbl(" + n + ", v);";
            case BYTES:
                return "w.base64(" + n + ", v);";
            case MESSAGE:
                Descriptor m = f.getMessageType();
                switch (m.getFullName()) {
                    case QUANTITY:
                        return "w.quantity(" + n + ", v);";
                    case INT_OR_STRING:
                        return "w.intOrString(" + n + ", v);";
                    case META + "Time":
                        return "w.time(" + n + ", v);";
                    case META + "MicroTime":
                        return "w.microTime(" + n + ", v);";
                    case META + "FieldsV1":
                        return "w.fieldsV1(" + n + ", v);";
                    case RAW_EXTENSION:
                        return "w.rawJson(" + n + ", v);";
                    case META + "Duration":
                        return "throw new ProtobufEncodingException(\"" + f.getFullName() + ": Duration not encoded\");";
                    default:
                        if (isStringItems(m)) {
                            return "w.stringItems(" + n + ", v);";
                        }
                        Pair child = new Pair(m, (Class<?>) t);
                        return "int m = w.mark(); " + className(m) + ".write" + methodName(child) + "(w, v); w.endMessage("
                                + n + ", m);";
                }
            default:
                throw new IllegalStateException(f.getFullName());
        }
    }

    /** A map value's proto default, as Go leaves a missing value: its zero. */
    private static String zero(FieldDescriptor value, Type v) {
        return switch (value.getType()) {
            case STRING, BYTES -> "\"\"";
            case BOOL -> "false";
            case INT32 -> "0";
            case INT64 -> "0L";
            case DOUBLE -> "0.0";
            case MESSAGE -> switch (value.getMessageType().getFullName()) {
                case QUANTITY -> "new io.fabric8.kubernetes.api.model.Quantity(\"0\")";
                default -> isStringItems(value.getMessageType()) ? "new java.util.ArrayList<>()"
                        : "new " + v.getTypeName().replace('$', '.') + "()";
            };
            default -> throw new IllegalStateException(value.getFullName());
        };
    }

    private String indexSource(Map<String, Root> roots, Map<String, String> notDecodable) {
        StringBuilder s = new StringBuilder(HEADER);
        s.append("package ").append(PACKAGE).append(";\n\n");
        s.append("import java.util.Map;\n\n");
        s.append("/** The kinds with a generated decoder, and those without one (and why): JSON for those. */\n");
        s.append("final class ProtobufDecoders {\n\n    private ProtobufDecoders() {\n    }\n\n");
        s.append("    /** apiVersion/kind → its decoder. */\n");
        s.append("    static final Map<String, ProtobufKind<?>> KINDS = Map.ofEntries(\n");
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, Root> e : roots.entrySet()) {
            Root r = e.getValue();
            String type = r.pair().type().getName();
            lines.add("            Map.entry(\"" + e.getKey() + "\", new ProtobufKind<>(\"" + r.apiVersion() + "\", \""
                    + r.kind() + "\", " + type + ".class, " + type + "::new, " + className(r.pair().message())
                    + "::merge" + methodName(r.pair()) + ", " + className(r.pair().message()) + "::write"
                    + methodName(r.pair()) + "))");
        }
        s.append(String.join(",\n", lines)).append(");\n\n");
        s.append("    /** apiVersion/kind → why it has no decoder. */\n");
        s.append("    static final Map<String, String> NOT_DECODABLE = Map.ofEntries(\n");
        lines.clear();
        for (Map.Entry<String, String> e : notDecodable.entrySet()) {
            lines.add("            Map.entry(\"" + e.getKey() + "\", \"" + e.getValue().replace("\"", "'") + "\")");
        }
        s.append(String.join(",\n", lines)).append(");\n}\n");
        return s.toString();
    }
}
