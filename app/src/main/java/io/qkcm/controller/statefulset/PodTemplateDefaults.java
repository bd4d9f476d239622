package io.qkcm.controller.statefulset;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.qkcm.controller.hash.GoQuantityJson;

/**
 * The part of {@code legacyscheme.Scheme.Default(set)} that can change a StatefulSet revision: the
 * apps/v1 {@code SetObjectDefaults_StatefulSet} walk over {@code spec.template} (k8s.io/kubernetes
 * v1.34 pkg/apis/apps/v1/zz_generated.defaults.go with pkg/apis/core/v1/defaults.go's SetDefaults_PodSpec,
 * _Volume, _HostPathVolumeSource, _SecretVolumeSource, _ConfigMapVolumeSource, _DownwardAPIVolumeSource,
 * _ProjectedVolumeSource, _ServiceAccountTokenProjection, _PersistentVolumeClaimSpec, _ObjectFieldSelector,
 * _Container, _EphemeralContainer, _Probe, _HTTPGetAction, _ResourceList and the generated
 * {@code +default} markers). The one feature gate the template's defaulting reads is ImageVolume (off
 * by default in v1.34): with it, an image volume's pull policy is defaulted as a container's. The
 * set-level defaults (SetDefaults_StatefulSet: replicas, strategy, retention policy, history limit) and
 * the volumeClaimTemplates' defaults are left out: a revision is built from the template (and the set's
 * annotations, which no default touches) alone, so they cannot change the comparison. SetDefaults_Pod (pod-level
 * request defaulting, host-network ports) is registered for Pods, not for templates, and does not run.
 *
 * <p>
 * Works on the tree Go's {@code encoding/json} writes for a {@code v1.PodTemplateSpec} (the output of
 * {@code GoTypedJson.podTemplateSpec}), so an absent key, {@code null}, {@code ""} and {@code 0} are the Go
 * zero values they stand for, and every value set here is the one Go marshals.
 */
final class PodTemplateDefaults {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** The members of v1.VolumeSource (k8s.io/api v0.34): all pointers, for ptr.AllPtrFieldsNil. */
    private static final List<String> VOLUME_SOURCES = List.of("hostPath", "emptyDir", "gcePersistentDisk",
            "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd",
            "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume",
            "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi",
            "ephemeral", "image");

    private static final int DEFAULT_MODE = 0644; // Secret/ConfigMap/DownwardAPI/ProjectedVolumeSourceDefaultMode
    private static final long TOKEN_EXPIRATION_SECONDS = 3600;
    private static final int MILLI_SCALE = -3;

    /** Under v1.34's default feature gates. */
    static final PodTemplateDefaults DEFAULT_GATES = new PodTemplateDefaults(false);

    private final boolean imageVolume;

    /** @param imageVolume the ImageVolume feature gate */
    PodTemplateDefaults(boolean imageVolume) {
        this.imageVolume = imageVolume;
    }

    /** SetObjectDefaults_StatefulSet's walk over the template, in place. */
    void apply(ObjectNode template) {
        ObjectNode spec = child(template, "spec");
        if (spec == null) {
            spec = NODES.objectNode();
            template.set("spec", spec);
        }
        podSpec(spec);
        for (ObjectNode volume : items(spec, "volumes")) {
            volume(volume);
        }
        for (ObjectNode c : items(spec, "initContainers")) {
            container(c);
        }
        for (ObjectNode c : items(spec, "containers")) {
            container(c);
        }
        for (ObjectNode c : items(spec, "ephemeralContainers")) {
            container(c); // EphemeralContainerCommon is inline: the same keys
        }
        resourceList(spec, "overhead");
        ObjectNode resources = child(spec, "resources");
        if (resources != null) {
            resourceList(resources, "limits");
            resourceList(resources, "requests");
        }
    }

    /** SetDefaults_PodSpec. */
    private static void podSpec(ObjectNode spec) {
        defaultString(spec, "dnsPolicy", "ClusterFirst");
        defaultString(spec, "restartPolicy", "Always");
        if (nil(spec, "securityContext")) {
            spec.set("securityContext", NODES.objectNode());
        }
        if (nil(spec, "terminationGracePeriodSeconds")) {
            spec.put("terminationGracePeriodSeconds", 30L);
        }
        defaultString(spec, "schedulerName", "default-scheduler");
    }

    private void volume(ObjectNode volume) {
        // SetDefaults_Volume
        boolean anySource = false;
        for (String source : VOLUME_SOURCES) {
            anySource |= !nil(volume, source);
        }
        if (!anySource) {
            volume.set("emptyDir", NODES.objectNode());
        }
        ObjectNode image = child(volume, "image");
        if (imageVolume && image != null && emptyString(image, "pullPolicy")) {
            image.put("pullPolicy", pullPolicy(text(image, "reference")));
        }
        ObjectNode hostPath = child(volume, "hostPath");
        if (hostPath != null && nil(hostPath, "type")) {
            hostPath.put("type", ""); // HostPathUnset
        }
        defaultMode(child(volume, "secret"));
        ObjectNode iscsi = child(volume, "iscsi");
        if (iscsi != null) {
            defaultString(iscsi, "iscsiInterface", "default");
        }
        ObjectNode rbd = child(volume, "rbd");
        if (rbd != null) {
            defaultString(rbd, "pool", "rbd");
            defaultString(rbd, "user", "admin");
            defaultString(rbd, "keyring", "/etc/ceph/keyring");
        }
        ObjectNode downwardAPI = child(volume, "downwardAPI");
        if (downwardAPI != null) {
            defaultMode(downwardAPI);
            downwardAPIItems(downwardAPI);
        }
        defaultMode(child(volume, "configMap"));
        ObjectNode azureDisk = child(volume, "azureDisk");
        if (azureDisk != null) {
            if (nil(azureDisk, "cachingMode")) {
                azureDisk.put("cachingMode", "ReadWrite");
            }
            if (nil(azureDisk, "fsType")) {
                azureDisk.put("fsType", "ext4");
            }
            if (nil(azureDisk, "readOnly")) {
                azureDisk.put("readOnly", false);
            }
            if (nil(azureDisk, "kind")) {
                azureDisk.put("kind", "Shared");
            }
        }
        ObjectNode projected = child(volume, "projected");
        if (projected != null) {
            defaultMode(projected);
            for (ObjectNode source : items(projected, "sources")) {
                ObjectNode dapi = child(source, "downwardAPI");
                if (dapi != null) {
                    downwardAPIItems(dapi);
                }
                ObjectNode token = child(source, "serviceAccountToken");
                if (token != null && nil(token, "expirationSeconds")) {
                    token.put("expirationSeconds", TOKEN_EXPIRATION_SECONDS);
                }
            }
        }
        ObjectNode scaleIO = child(volume, "scaleIO");
        if (scaleIO != null) {
            defaultString(scaleIO, "storageMode", "ThinProvisioned");
            defaultString(scaleIO, "fsType", "xfs");
        }
        ObjectNode ephemeral = child(volume, "ephemeral");
        ObjectNode claimTemplate = ephemeral == null ? null : child(ephemeral, "volumeClaimTemplate");
        if (claimTemplate != null) {
            ObjectNode claimSpec = child(claimTemplate, "spec");
            if (claimSpec == null) {
                claimSpec = NODES.objectNode(); // a struct: Go always writes it
                claimTemplate.set("spec", claimSpec);
            }
            if (nil(claimSpec, "volumeMode")) {
                claimSpec.put("volumeMode", "Filesystem");
            }
            ObjectNode resources = child(claimSpec, "resources");
            if (resources != null) {
                resourceList(resources, "limits");
                resourceList(resources, "requests");
            }
        }
    }

    private static void downwardAPIItems(ObjectNode downwardAPI) {
        for (ObjectNode item : items(downwardAPI, "items")) {
            fieldRef(child(item, "fieldRef"));
        }
    }

    private static void defaultMode(ObjectNode source) {
        if (source != null && nil(source, "defaultMode")) {
            source.put("defaultMode", DEFAULT_MODE);
        }
    }

    /** SetDefaults_ObjectFieldSelector. */
    private static void fieldRef(ObjectNode fieldRef) {
        if (fieldRef != null) {
            defaultString(fieldRef, "apiVersion", "v1");
        }
    }

    /** SetDefaults_Container and the generated walk below it (ports, env, resources, probes, lifecycle). */
    private static void container(ObjectNode c) {
        if (emptyString(c, "imagePullPolicy")) {
            c.put("imagePullPolicy", pullPolicy(text(c, "image")));
        }
        defaultString(c, "terminationMessagePath", "/dev/termination-log");
        defaultString(c, "terminationMessagePolicy", "File");
        for (ObjectNode port : items(c, "ports")) {
            defaultString(port, "protocol", "TCP");
        }
        for (ObjectNode env : items(c, "env")) {
            ObjectNode valueFrom = child(env, "valueFrom");
            if (valueFrom != null) {
                fieldRef(child(valueFrom, "fieldRef"));
                ObjectNode fileKeyRef = child(valueFrom, "fileKeyRef");
                if (fileKeyRef != null && nil(fileKeyRef, "optional")) {
                    fileKeyRef.put("optional", false);
                }
            }
        }
        ObjectNode resources = child(c, "resources");
        if (resources != null) {
            resourceList(resources, "limits");
            resourceList(resources, "requests");
        }
        for (String probeName : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
            ObjectNode probe = child(c, probeName);
            if (probe == null) {
                continue;
            }
            defaultInt(probe, "timeoutSeconds", 1);
            defaultInt(probe, "periodSeconds", 10);
            defaultInt(probe, "successThreshold", 1);
            defaultInt(probe, "failureThreshold", 3);
            httpGet(child(probe, "httpGet"));
            ObjectNode grpc = child(probe, "grpc");
            if (grpc != null && nil(grpc, "service")) {
                grpc.put("service", "");
            }
        }
        ObjectNode lifecycle = child(c, "lifecycle");
        if (lifecycle != null) {
            for (String hook : List.of("postStart", "preStop")) {
                ObjectNode handler = child(lifecycle, hook);
                if (handler != null) {
                    httpGet(child(handler, "httpGet"));
                }
            }
        }
    }

    private static String pullPolicy(String image) {
        return "latest".equals(imageTag(image)) ? "Always" : "IfNotPresent";
    }

    /** SetDefaults_HTTPGetAction. */
    private static void httpGet(ObjectNode action) {
        if (action != null) {
            defaultString(action, "path", "/");
            defaultString(action, "scheme", "HTTP");
        }
    }

    /** SetDefaults_ResourceList: every quantity rounded up to milli precision, as Go then marshals it. */
    private static void resourceList(ObjectNode parent, String name) {
        ObjectNode list = child(parent, name);
        if (list == null) {
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = list.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isTextual()) {
                e.setValue(NODES.textNode(GoQuantityJson.roundUpAndMarshal(e.getValue().textValue(), MILLI_SCALE)));
            }
        }
    }

    // ---- parsers.ParseImageName's tag (github.com/distribution/reference v0.6.0 ParseNormalizedNamed) ----

    private static final String ALNUM = "[a-z0-9]+";
    private static final String SEPARATOR = "(?:[._]|__|[-]+)";
    private static final String DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    private static final String DOMAIN_AND_PORT = "(?:" + DOMAIN_COMPONENT + "(?:\\." + DOMAIN_COMPONENT + ")*"
            + "|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?";
    private static final String PATH_COMPONENT = ALNUM + "(?:" + SEPARATOR + ALNUM + ")*";
    private static final String REMOTE_NAME = PATH_COMPONENT + "(?:/" + PATH_COMPONENT + ")*";
    private static final String TAG = "[\\w][\\w.-]{0,127}";
    private static final String DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}";
    private static final Pattern REFERENCE = Pattern.compile("^((?:" + DOMAIN_AND_PORT + "/)?" + REMOTE_NAME + ")"
            + "(?::(" + TAG + "))?(?:@(" + DIGEST + "))?$");
    private static final Pattern ANCHORED_NAME = Pattern.compile("^(?:(" + DOMAIN_AND_PORT + ")/)?(" + REMOTE_NAME + ")$");
    private static final Pattern IDENTIFIER = Pattern.compile("^[a-f0-9]{64}$");
    private static final int REPOSITORY_NAME_TOTAL_LENGTH_MAX = 255;

    /** The tag ParseImageName returns: "" when the name does not parse, "latest" when it has neither tag nor digest. */
    static String imageTag(String image) {
        if (IDENTIFIER.matcher(image).matches()) {
            return "";
        }
        String domain;
        String remainder;
        int slash = image.indexOf('/');
        if (slash < 0) {
            domain = "docker.io";
            remainder = "library/" + image;
        } else {
            String maybeDomain = image.substring(0, slash);
            String maybeRemote = image.substring(slash + 1);
            if (maybeDomain.equals("localhost") || maybeDomain.contains(".") || maybeDomain.contains(":")
                    || !maybeDomain.toLowerCase(Locale.ROOT).equals(maybeDomain)) {
                domain = maybeDomain;
                remainder = maybeRemote;
            } else if (maybeDomain.equals("index.docker.io")) {
                domain = "docker.io";
                remainder = maybeRemote;
            } else {
                domain = "docker.io";
                remainder = image;
            }
            if (domain.equals("index.docker.io")) {
                domain = "docker.io";
            }
            if (domain.equals("docker.io") && remainder.indexOf('/') < 0) {
                remainder = "library/" + remainder;
            }
        }
        int colon = remainder.indexOf(':');
        String remote = colon < 0 ? remainder : remainder.substring(0, colon);
        if (!remote.toLowerCase(Locale.ROOT).equals(remote)) {
            return "";
        }
        Matcher m = REFERENCE.matcher(domain + "/" + remainder);
        if (!m.matches()) {
            return "";
        }
        Matcher name = ANCHORED_NAME.matcher(m.group(1));
        String path = name.matches() ? name.group(2) : m.group(1);
        if (path.length() > REPOSITORY_NAME_TOTAL_LENGTH_MAX) {
            return "";
        }
        String tag = m.group(2) == null ? "" : m.group(2);
        String digest = m.group(3) == null ? "" : m.group(3);
        if (!digest.isEmpty() && !validDigest(digest)) {
            return "";
        }
        return tag.isEmpty() && digest.isEmpty() ? "latest" : tag;
    }

    /** go-digest's Validate for the algorithms ParseImageName links in (sha256, sha384, sha512). */
    private static boolean validDigest(String digest) {
        int i = digest.indexOf(':');
        String encoded = digest.substring(i + 1);
        int length = switch (digest.substring(0, i)) {
            case "sha256" -> 64;
            case "sha384" -> 96;
            case "sha512" -> 128;
            default -> -1;
        };
        return length > 0 && encoded.length() == length && encoded.matches("[a-f0-9]+");
    }

    // ---- Go zero values on the JSON tree ----

    private static ObjectNode child(ObjectNode parent, String name) {
        JsonNode n = parent.get(name);
        return n instanceof ObjectNode o ? o : null;
    }

    private static List<ObjectNode> items(ObjectNode parent, String name) {
        JsonNode n = parent.get(name);
        if (n == null || !n.isArray()) {
            return List.of();
        }
        List<ObjectNode> out = new ArrayList<>();
        for (JsonNode item : n) {
            if (item instanceof ObjectNode o) {
                out.add(o);
            }
        }
        return out;
    }

    private static boolean nil(ObjectNode parent, String name) {
        JsonNode n = parent.get(name);
        return n == null || n.isNull();
    }

    private static String text(ObjectNode parent, String name) {
        JsonNode n = parent.get(name);
        return n == null || n.isNull() ? "" : n.asText();
    }

    private static boolean emptyString(ObjectNode parent, String name) {
        return text(parent, name).isEmpty();
    }

    private static void defaultString(ObjectNode parent, String name, String value) {
        if (emptyString(parent, name)) {
            parent.put(name, value);
        }
    }

    private static void defaultInt(ObjectNode parent, String name, int value) {
        JsonNode n = parent.get(name);
        if (n == null || n.isNull() || (n.isNumber() && n.asLong() == 0)) {
            parent.put(name, value);
        }
    }
}
