import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;

import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;

/**
 * CPU per pod of the decodings qkcm could use for the same API server answer (issue 18, "decode
 * less"): the pods of one cluster, fetched once as JSON and once as protobuf
 * (application/vnd.kubernetes.protobuf), decoded over and over on one thread; CPU time of that thread
 * (not wall time, so a busy machine shifts it less), per pod, median of the rounds.
 *
 *   java -cp "app/target/quarkus-app/quarkus-run.jar:app/target/quarkus-app/lib/*:bench/decode/lib/*" \
 *        bench/decode/DecodeBench.java pods.json pods.pb [rounds]
 *
 * Decodings: a LIST into fabric8's model (what qkcm does at a relist); each pod as a watch event, the
 * way fabric8 7.4 decodes it (tree, then bind), qkcm's one-pass way as it is now and with one of its
 * levers undone at a time (managedFields decoded, each object its own empty map, Blackbird registered
 * before fabric8's modules), and as it was in the second session of issue 18; the protobuf list and each
 * pod as protobuf with the Kubernetes Java client's generated classes (client-java-proto), which qkcm's
 * controllers cannot use as they are: they read fabric8's model. The cases' rounds interleave, so a
 * drift of the machine's speed spreads over all of them. -Dbench.only=<part of a name> keeps one case
 * (and fabric8's, the reference), e.g. to profile it with JFR.
 */
public class DecodeBench {

    public static void main(String[] args) throws Exception {
        byte[] json = Files.readAllBytes(Path.of(args[0]));
        byte[] pb = Files.readAllBytes(Path.of(args[1]));
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 15;

        Class<?> apiSerialization = Class.forName("io.qkcm.runtime.Json");
        Method create = apiSerialization.getDeclaredMethod("create", ObjectMapper.class, boolean.class);
        create.setAccessible(true);
        // (mapper, one pass, Blackbird registered last, shared empty maps, managedFields skipped)
        Method variant = apiSerialization.getDeclaredMethod("create", ObjectMapper.class, boolean.class, boolean.class,
                boolean.class, boolean.class);
        variant.setAccessible(true);
        // qkcm's serialization as it is now
        KubernetesSerialization onePass = (KubernetesSerialization) variant.invoke(null, new ObjectMapper(), true, true, true, true);
        // the second session's (2026-11-25-perf): Blackbird registered before fabric8's modules (its setters
        // hidden by fabric8's delegating properties), managedFields decoded, no shared maps
        KubernetesSerialization secondSession = (KubernetesSerialization) variant.invoke(null,
                new ObjectMapper().registerModule(new com.fasterxml.jackson.module.blackbird.BlackbirdModule()), true, false, false, false);
        KubernetesSerialization withManagedFields = (KubernetesSerialization) variant.invoke(null, new ObjectMapper(), true, true, true, false);
        KubernetesSerialization ownMaps = (KubernetesSerialization) variant.invoke(null, new ObjectMapper(), true, true, false, true);
        KubernetesSerialization blackbirdFirst = (KubernetesSerialization) variant.invoke(null,
                new ObjectMapper().registerModule(new com.fasterxml.jackson.module.blackbird.BlackbirdModule()), true, false, true, true);
        // fabric8 7.4's own way (with Blackbird registered first, as fabric8 users would add it)
        ObjectMapper blackbird2 = new ObjectMapper().registerModule(new com.fasterxml.jackson.module.blackbird.BlackbirdModule());
        KubernetesSerialization tree = (KubernetesSerialization) create.invoke(null, blackbird2, false);

        // the pods as the watch events the API server would send (one JSON line each)
        ObjectMapper plain = new ObjectMapper();
        List<String> events = new ArrayList<>();
        for (JsonNode item : plain.readTree(json).path("items")) {
            // a LIST's items carry no kind/apiVersion; a watch event's object does, first
            com.fasterxml.jackson.databind.node.ObjectNode object = plain.createObjectNode();
            object.put("kind", "Pod");
            object.put("apiVersion", "v1");
            object.setAll((com.fasterxml.jackson.databind.node.ObjectNode) item);
            events.add("{\"type\":\"MODIFIED\",\"object\":" + plain.writeValueAsString(object) + "}");
        }
        int pods = events.size();

        // protobuf: "k8s\0" + runtime.Unknown{raw: PodList}
        if (pb.length < 4 || pb[0] != 'k' || pb[1] != '8' || pb[2] != 's' || pb[3] != 0) {
            throw new IllegalArgumentException(args[1] + " is not a Kubernetes protobuf answer");
        }
        byte[] unknown = java.util.Arrays.copyOfRange(pb, 4, pb.length);
        List<ByteString> podBytes = new ArrayList<>();
        for (V1.Pod p : V1.PodList.parseFrom(Runtime.Unknown.parseFrom(unknown).getRaw()).getItemsList()) {
            podBytes.add(p.toByteString());
        }
        if (podBytes.size() != pods) {
            throw new IllegalStateException("JSON has " + pods + " pods, protobuf " + podBytes.size());
        }
        // the same pods as the frames of a protobuf watch: meta.v1.WatchEvent{type, object: RawExtension{raw:
        // "k8s\0" + runtime.Unknown{typeMeta, raw: Pod}}}
        List<byte[]> frames = new ArrayList<>();
        for (ByteString b : podBytes) {
            byte[] envelope = Runtime.Unknown.newBuilder()
                    .setTypeMeta(Runtime.TypeMeta.newBuilder().setApiVersion("v1").setKind("Pod")).setRaw(b).build().toByteArray();
            byte[] object = new byte[envelope.length + 4];
            System.arraycopy(new byte[] {'k', '8', 's', 0}, 0, object, 0, 4);
            System.arraycopy(envelope, 0, object, 4, envelope.length);
            frames.add(io.kubernetes.client.proto.Meta.WatchEvent.newBuilder().setType("MODIFIED")
                    .setObject(Runtime.RawExtension.newBuilder().setRaw(ByteString.copyFrom(object))).build().toByteArray());
        }
        byte[] pbList = pb;
        System.out.printf(Locale.ROOT, "# %d pods; JSON %d bytes (%d per pod), protobuf %d bytes (%d per pod); %s %s%n",
                pods, json.length, json.length / pods, pb.length, pb.length / pods, System.getProperty("java.vm.version"),
                ManagementFactory.getRuntimeMXBean().getInputArguments());

        List<Case> cases = List.of(
                new Case("JSON list -> fabric8 PodList", () -> {
                    PodList l = onePass.unmarshal(new java.io.ByteArrayInputStream(json), PodList.class);
                    return l.getItems().size();
                }),
                watchEvents("JSON watch events, fabric8 7.4 (tree, then bind)", tree, events),
                watchEvents("JSON watch events, one pass (qkcm with --kube-api-content-type=application/json: Blackbird last, managedFields skipped, shared empty maps)", onePass, events),
                watchEvents("  the same, managedFields decoded", withManagedFields, events),
                watchEvents("  the same, each object its own empty map", ownMaps, events),
                watchEvents("  the same, Blackbird registered first", blackbirdFirst, events),
                watchEvents("JSON watch events, one pass with the 2nd session's levers only (Blackbird first, managedFields decoded, own maps; deserializer lookup cached as in every row)", secondSession, events),
                new Case("protobuf list -> fabric8 PodList (qkcm's runtime.protobuf, for the cache)", () ->
                        io.qkcm.runtime.protobuf.KubernetesProtobuf.decodeForCache(pbList, PodList.class).getItems().size()),
                new Case("protobuf watch frames -> fabric8 Pod (qkcm's runtime.protobuf, for the cache: qkcm now)", () -> {
                    int n = 0;
                    for (byte[] f : frames) {
                        n += io.qkcm.runtime.protobuf.KubernetesProtobuf.decodeWatchEventForCache(f).getObject() != null ? 1 : 0;
                    }
                    return n;
                }),
                new Case("protobuf list -> client-java-proto V1.PodList", () ->
                        V1.PodList.parseFrom(Runtime.Unknown.parseFrom(unknown).getRaw()).getItemsCount()),
                new Case("protobuf, each pod -> V1.Pod", () -> {
                    int n = 0;
                    for (ByteString b : podBytes) {
                        n += V1.Pod.parseFrom(b).hasMetadata() ? 1 : 0;
                    }
                    return n;
                }));

        // -Dbench.only=<substring>: only the cases whose name contains it (to profile one)
        String only = System.getProperty("bench.only");
        if (only != null) {
            cases = cases.stream().filter(c -> c.name.contains(only) || c.name.contains("fabric8 7.4")).toList();
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.println("| decoding | CPU µs per pod (median of " + rounds + " rounds) | relative to fabric8 7.4's watch decoding |");
        System.out.println("|---|---|---|");
        double[] medians = new double[cases.size()];
        for (int warm = 0; warm < 3; warm++) {
            for (Case c : cases) {
                c.run.call();
            }
        }
        // rounds interleave the cases: this machine's CPU speed drifts by tens of percent over minutes, so
        // each case is measured across the whole run, not in one stretch of it
        double[][] perPod = new double[cases.size()][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < cases.size(); i++) {
                Case c = cases.get(i);
                long t0 = threads.getCurrentThreadCpuTime();
                int n = c.run.call();
                long t1 = threads.getCurrentThreadCpuTime();
                if (n != pods) {
                    throw new IllegalStateException(c.name + ": " + n + " of " + pods);
                }
                perPod[i][r] = (t1 - t0) / 1000.0 / pods;
            }
        }
        for (int i = 0; i < cases.size(); i++) {
            java.util.Arrays.sort(perPod[i]);
            medians[i] = perPod[i][rounds / 2];
        }
        int reference = 0;
        for (int i = 0; i < cases.size(); i++) {
            reference = cases.get(i).name.contains("fabric8 7.4") ? i : reference;
        }
        for (int i = 0; i < cases.size(); i++) {
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.2f |%n", cases.get(i).name, medians[i], medians[i] / medians[reference]);
        }
    }

    static Case watchEvents(String name, KubernetesSerialization serialization, List<String> events) {
        return new Case(name, () -> {
            int n = 0;
            for (String e : events) {
                n += serialization.unmarshal(e, WatchEvent.class).getObject() != null ? 1 : 0;
            }
            return n;
        });
    }

    interface Decode {
        int call() throws Exception;
    }

    record Case(String name, Decode run) {
    }
}
