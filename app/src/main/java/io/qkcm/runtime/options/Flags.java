package io.qkcm.runtime.options;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-controller-manager's complete flag set (names, types, defaults of v1.34.4, generated into
 * qkcm/flags.tsv by hack/gen/flags.py), with qkcm's own usage text for the flags it acts on. Every
 * other flag is accepted so that existing command lines keep working, and {@code --help} lists it as
 * having no effect in qkcm yet.
 */
public final class Flags {

    /** Flags qkcm acts on, with what they do in qkcm. */
    private static final Map<String, String> IMPLEMENTED = new LinkedHashMap<>();

    /** Accepted flags whose upstream meaning qkcm covers differently; shown in --help. */
    private static final Map<String, String> NOTES = new LinkedHashMap<>();

    static {
        IMPLEMENTED.put("kubeconfig", "Path to a kubeconfig file for the API server. Without it and --master, qkcm uses $KUBECONFIG, ~/.kube/config or the in-cluster service account, in that order.");
        IMPLEMENTED.put("master", "Address of the API server; overrides the server in --kubeconfig.");
        IMPLEMENTED.put("controllers", "Controllers to run: '*' runs every controller on by default, 'foo' adds one, '-foo' removes one. Current names and the old aliases are accepted.");
        IMPLEMENTED.put("leader-elect", "Take the leader lease before running controllers; standby replicas keep caches warm.");
        IMPLEMENTED.put("leader-elect-lease-duration", "How long a standby waits after the last renewal before taking the lease.");
        IMPLEMENTED.put("leader-elect-renew-deadline", "How long the leader keeps retrying a renewal before it gives up leadership (and exits).");
        IMPLEMENTED.put("leader-elect-retry-period", "Wait between attempts to take or renew the lease.");
        IMPLEMENTED.put("leader-elect-resource-name", "Name of the Lease used for leader election.");
        IMPLEMENTED.put("leader-elect-resource-namespace", "Namespace of the Lease used for leader election.");
        IMPLEMENTED.put("leader-elect-resource-lock", "Lock type; only 'leases' is supported, as upstream.");
        IMPLEMENTED.put("kube-api-qps", "Requests per second each controller's API client may send (token bucket, as client-go).");
        IMPLEMENTED.put("kube-api-burst", "Burst of requests each controller's API client may send above --kube-api-qps.");
        IMPLEMENTED.put("bind-address", "Address to serve HTTPS (/healthz, /livez, /readyz, /metrics) on.");
        IMPLEMENTED.put("secure-port", "Port to serve HTTPS on; 0 disables serving.");
        IMPLEMENTED.put("tls-cert-file", "Serving certificate (PEM). Without it qkcm generates a self-signed one at startup.");
        IMPLEMENTED.put("tls-private-key-file", "Private key (PEM) for --tls-cert-file.");
        IMPLEMENTED.put("authorization-always-allow-paths", "Paths served without authentication or authorization.");
        IMPLEMENTED.put("authentication-kubeconfig", "Kubeconfig allowed to create TokenReviews; without it, bearer tokens are not verified and requests are anonymous.");
        IMPLEMENTED.put("authorization-kubeconfig", "Kubeconfig allowed to create SubjectAccessReviews; without it, every request outside the always-allowed paths is forbidden.");
        IMPLEMENTED.put("authentication-token-webhook-cache-ttl", "How long TokenReview answers are cached.");
        IMPLEMENTED.put("authentication-skip-lookup", "Do not read the client CA from configmap kube-system/extension-apiserver-authentication.");
        IMPLEMENTED.put("client-ca-file", "CA (PEM) verifying client certificates (user = CN, groups = O); without it, client-ca-file of configmap kube-system/extension-apiserver-authentication, read at startup.");
        IMPLEMENTED.put("authorization-webhook-cache-authorized-ttl", "How long allowing SubjectAccessReview answers are cached.");
        IMPLEMENTED.put("authorization-webhook-cache-unauthorized-ttl", "How long denying SubjectAccessReview answers are cached.");
        IMPLEMENTED.put("min-resync-period", "Informers resync at a random period between this and twice this.");
        IMPLEMENTED.put("feature-gates", "Feature gates, as upstream's (A=true,B=false); they decide which gated controllers run, and WatchListClient whether informers start with a streaming list.");
        IMPLEMENTED.put("v", "Log verbosity: 0-1 info, 2-3 adds controller decisions, 4+ debug.");
        IMPLEMENTED.put("concurrent-replicaset-syncs", "Workers of replicaset-controller.");
        IMPLEMENTED.put("concurrent-rc-syncs", "Workers of replicationcontroller-controller.");
        IMPLEMENTED.put("concurrent-cron-job-syncs", "Workers of cronjob-controller.");
        IMPLEMENTED.put("use-service-account-credentials", "Each controller authenticates as the ServiceAccount kube-system/<controller-name> with a bound token (TokenRequest), as upstream.");
        IMPLEMENTED.put("concurrent-gc-syncs", "Workers of garbage-collector-controller (each for attempt-to-delete and attempt-to-orphan).");
        IMPLEMENTED.put("enable-garbage-collector", "Run garbage-collector-controller; false skips it even when --controllers selects it.");
        IMPLEMENTED.put("concurrent-namespace-syncs", "Workers of namespace-controller.");
        IMPLEMENTED.put("namespace-sync-period", "How often namespace-controller re-examines every namespace (resync of its namespace handler).");
        IMPLEMENTED.put("concurrent-serviceaccount-token-syncs", "Workers of each of serviceaccount-token-controller's two queues.");
        IMPLEMENTED.put("root-ca-file", "CA bundle (PEM) published as ca.crt in kube-root-ca.crt ConfigMaps and service-account token Secrets; without it, the CA of qkcm's API client configuration.");
        IMPLEMENTED.put("cluster-signing-cert-file", "PEM CA certificate with which certificatesigningrequest-signing-controller signs for every kubernetes.io signer (with --cluster-signing-key-file); re-read when it changes. Without it and without per-signer files the controller does not run.");
        IMPLEMENTED.put("cluster-signing-key-file", "PEM RSA or ECDSA private key of --cluster-signing-cert-file.");
        IMPLEMENTED.put("cluster-signing-duration", "Longest validity of a signed certificate; spec.expirationSeconds may ask for less (10 minutes at least).");
        IMPLEMENTED.put("cluster-signing-kubelet-serving-cert-file", "CA certificate of the kubernetes.io/kubelet-serving signer only (excludes --cluster-signing-cert-file).");
        IMPLEMENTED.put("cluster-signing-kubelet-serving-key-file", "Key of --cluster-signing-kubelet-serving-cert-file.");
        IMPLEMENTED.put("cluster-signing-kubelet-client-cert-file", "CA certificate of the kubernetes.io/kube-apiserver-client-kubelet signer only (excludes --cluster-signing-cert-file).");
        IMPLEMENTED.put("cluster-signing-kubelet-client-key-file", "Key of --cluster-signing-kubelet-client-cert-file.");
        IMPLEMENTED.put("cluster-signing-kube-apiserver-client-cert-file", "CA certificate of the kubernetes.io/kube-apiserver-client signer only (excludes --cluster-signing-cert-file).");
        IMPLEMENTED.put("cluster-signing-kube-apiserver-client-key-file", "Key of --cluster-signing-kube-apiserver-client-cert-file.");
        IMPLEMENTED.put("cluster-signing-legacy-unknown-cert-file", "CA certificate of the kubernetes.io/legacy-unknown signer only (excludes --cluster-signing-cert-file).");
        IMPLEMENTED.put("cluster-signing-legacy-unknown-key-file", "Key of --cluster-signing-legacy-unknown-cert-file.");
        IMPLEMENTED.put("service-account-private-key-file", "PEM RSA or ECDSA private key signing legacy service-account tokens; without it serviceaccount-token-controller does not run.");
        IMPLEMENTED.put("legacy-service-account-token-clean-up-period", "How long an auto-generated legacy token must go unused before it is labelled invalid, and stay invalid before it is deleted.");
        IMPLEMENTED.put("concurrent-daemonset-syncs", "Workers of daemonset-controller (and as many for its node-update queue).");
        IMPLEMENTED.put("concurrent-deployment-syncs", "Workers of deployment-controller.");
        IMPLEMENTED.put("concurrent-statefulset-syncs", "Workers of statefulset-controller.");
        IMPLEMENTED.put("concurrent-job-syncs", "Workers of job-controller (each for the job queue and the orphan-pod queue).");
        IMPLEMENTED.put("mirroring-concurrent-service-endpoint-syncs", "Workers of endpointslice-mirroring-controller.");
        IMPLEMENTED.put("mirroring-max-endpoints-per-subset", "Addresses of one Endpoints subset mirrored into its EndpointSlice; the rest are skipped with a TooManyAddressesToMirror event.");
        IMPLEMENTED.put("mirroring-endpointslice-updates-batch-period", "Delay before an EndpointSlice change requeues its Endpoints in endpointslice-mirroring-controller, batching changes.");
        IMPLEMENTED.put("concurrent-endpoint-syncs", "Workers of endpoints-controller.");
        IMPLEMENTED.put("endpoint-updates-batch-period", "How long endpoints-controller waits after a pod change before syncing the Services it affects, so several changes make one update.");
        IMPLEMENTED.put("concurrent-service-endpoint-syncs", "Workers of endpointslice-controller.");
        IMPLEMENTED.put("max-endpoints-per-slice", "Most endpoints endpointslice-controller puts in one EndpointSlice.");
        IMPLEMENTED.put("endpointslice-updates-batch-period", "Delay of endpointslice-controller syncs triggered by pod changes, to batch them.");
        IMPLEMENTED.put("concurrent-ttl-after-finished-syncs", "Workers of ttl-after-finished-controller.");
        IMPLEMENTED.put("concurrent-resource-quota-syncs", "Workers of resourcequota-controller (each for its queue and its priority queue).");
        IMPLEMENTED.put("resource-quota-sync-period", "How often resourcequota-controller recalculates every quota's usage in full.");
        IMPLEMENTED.put("concurrent-ephemeralvolume-syncs", "Workers of ephemeral-volume-controller.");
        IMPLEMENTED.put("terminated-pod-gc-threshold", "Terminated pods (Succeeded or Failed) kept before pod-garbage-collector-controller deletes the oldest; 0 or less disables that deletion.");
        IMPLEMENTED.put("allocate-node-cidrs", "Run node-ipam-controller: give every node spec.podCIDR(s) from --cluster-cidr.");
        IMPLEMENTED.put("cidr-allocator-type", "node-ipam-controller's allocator; only RangeAllocator exists (as upstream without a cloud provider).");
        IMPLEMENTED.put("cluster-cidr", "The pod CIDR(s) node-ipam-controller splits into node blocks: one, or an IPv4 and an IPv6 one, comma-separated.");
        IMPLEMENTED.put("node-cidr-mask-size", "Mask size of the node blocks of a single-stack cluster (default 24 for IPv4, 64 for IPv6).");
        IMPLEMENTED.put("node-cidr-mask-size-ipv4", "Mask size of the IPv4 node blocks (default 24).");
        IMPLEMENTED.put("node-cidr-mask-size-ipv6", "Mask size of the IPv6 node blocks (default 64).");
        IMPLEMENTED.put("service-cluster-ip-range", "Service range(s), at most two comma-separated, that node-ipam-controller never gives to nodes.");
        IMPLEMENTED.put("node-monitor-period", "How often node-lifecycle-controller checks every node's Lease and status.");
        IMPLEMENTED.put("node-monitor-grace-period", "How long a node may go without a renewed Lease or a new status before node-lifecycle-controller sets its conditions to Unknown.");
        IMPLEMENTED.put("node-startup-grace-period", "As --node-monitor-grace-period, for a node that never posted a status.");
        IMPLEMENTED.put("node-eviction-rate", "NoExecute taints per second node-lifecycle-controller adds to unhealthy nodes of a zone that is not in partial disruption.");
        IMPLEMENTED.put("secondary-node-eviction-rate", "NoExecute taints per second in a zone in partial disruption larger than --large-cluster-size-threshold.");
        IMPLEMENTED.put("large-cluster-size-threshold", "Nodes a zone needs for --secondary-node-eviction-rate; a smaller zone in partial disruption gets no NoExecute taints.");
        IMPLEMENTED.put("unhealthy-zone-threshold", "Share of not Ready nodes (at least 3) that puts a zone in partial disruption.");
        IMPLEMENTED.put("attach-detach-reconcile-sync-period", "How often persistentvolume-attach-detach-controller checks its attached volumes against their VolumeAttachments (less than 1s: never).");
        IMPLEMENTED.put("flex-volume-plugin-dir", "Directory persistentvolume-attach-detach-controller watches for FlexVolume drivers (<vendor>~<driver>/<driver>); it runs their attach, detach and isattached calls.");
        IMPLEMENTED.put("disable-attach-detach-reconcile-sync", "persistentvolume-attach-detach-controller never checks its attached volumes against their VolumeAttachments.");
        IMPLEMENTED.put("disable-force-detach-on-timeout", "persistentvolume-attach-detach-controller never detaches a volume still in use on a node that is not Ready after the 6 minute maximum wait.");
        IMPLEMENTED.put("concurrent-horizontal-pod-autoscaler-syncs", "Workers of horizontal-pod-autoscaler-controller.");
        IMPLEMENTED.put("horizontal-pod-autoscaler-sync-period", "How often horizontal-pod-autoscaler-controller syncs each HPA (every add or update waits this long too, as upstream's queue).");
        IMPLEMENTED.put("horizontal-pod-autoscaler-downscale-stabilization", "How far back an HPA without behavior (or a scale-down rule without a window) looks for a higher recommendation before scaling down.");
        IMPLEMENTED.put("horizontal-pod-autoscaler-tolerance", "The ratio of a metric to its target within which an HPA does not scale (e.g. 0.1: 90%..110%).");
        IMPLEMENTED.put("horizontal-pod-autoscaler-cpu-initialization-period", "After a pod starts, how long its CPU samples count only once it is ready and the sample was taken after it became ready.");
        IMPLEMENTED.put("horizontal-pod-autoscaler-initial-readiness-delay", "After a pod starts, the period whose readiness changes are its initial readiness: past the CPU initialization period, a pod not ready since then counts as unready for CPU.");
        IMPLEMENTED.put("kube-api-content-type", "Content type of requests to the API server: application/vnd.kubernetes.protobuf reads the informers' lists and watches of built-in kinds in protobuf (JSON for custom resources and the kinds this build does not decode); creates and updates of pods, ReplicaSets, ReplicationControllers, Deployments and Events are protobuf too (other writes and all patches JSON); application/json: everything JSON.");
    }

    /** qkcm's own settings beyond upstream's flag set, under the same flag and config rules. */
    private static final List<Flag> EXTENSIONS = List.of(
            new Flag("qkcm extension", "leader-elect-release-on-cancel", "", "bool", "true",
                    "On a clean shutdown, release the leader lease so a standby takes over at once instead of after --leader-elect-lease-duration.",
                    true),
            new Flag("qkcm extension", "legacy-service-account-token-cleaner-sync-interval", "", "duration", "24h0m0s",
                    "How often legacy-serviceaccount-token-cleaner-controller evaluates legacy tokens (upstream: fixed at 24h).",
                    true),
            new Flag("qkcm extension", "shutdown-grace-period", "", "duration", "10s",
                    "On SIGTERM, how long syncs in flight may take to finish before the process exits.", true),
            new Flag("qkcm extension", "shadow", "", "bool", "false",
                    "Shadow mode: run beside the cluster's kube-controller-manager, send every write as a dry run (dryRun=All), and compare it with what upstream wrote (/shadow on the secure port, qkcm_shadow_actions_total). Leader election, if on, uses the Lease --leader-elect-resource-name + \"-shadow\".",
                    true),
            new Flag("qkcm extension", "shadow-match-window", "", "duration", "10s",
                    "Shadow mode: how long the writes to one object may wait for the other side's before they are classified.",
                    true),
            new Flag("qkcm extension", "shadow-upstream-manager", "", "string", "kube-controller-manager",
                    "Shadow mode: the field manager (managedFields) that names upstream's writes.", true));

    private final Map<String, Flag> byName = new LinkedHashMap<>();
    private final Map<String, Flag> byShorthand = new LinkedHashMap<>();

    private Flags(List<Flag> flags) {
        for (Flag f : flags) {
            byName.put(f.name(), f);
            if (!f.shorthand().isEmpty()) {
                byShorthand.put(f.shorthand(), f);
            }
        }
    }

    public static Flags upstream() {
        List<Flag> flags = new ArrayList<>();
        try (InputStream in = Flags.class.getClassLoader().getResourceAsStream("qkcm/flags.tsv")) {
            if (in == null) {
                throw new IllegalStateException("qkcm/flags.tsv is missing from the classpath");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] p = line.split("\t", -1);
                String usage = IMPLEMENTED.get(p[1]);
                flags.add(new Flag(p[0], p[1], p[2], p[3], p[4], usage == null ? "" : usage, usage != null));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        flags.addAll(EXTENSIONS);
        return new Flags(flags);
    }

    public Optional<Flag> byName(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Optional<Flag> byShorthand(String shorthand) {
        return Optional.ofNullable(byShorthand.get(shorthand));
    }

    public List<Flag> all() {
        return List.copyOf(byName.values());
    }

    /** {@code --help}: upstream's sections and flags, marking those qkcm accepts without acting on. */
    public String help(List<String> controllerNames, List<String> disabledByDefault, List<String> implemented,
            java.util.Map<String, String> partial) {
        StringBuilder sb = new StringBuilder();
        sb.append("qkcm: a drop-in kube-controller-manager (Kubernetes v1.34) on Quarkus.\n\n");
        sb.append("Usage:\n  qkcm [flags]\n\n");
        sb.append("Every flag is also the config property qkcm.<flag-name> (application.properties, environment\n");
        sb.append("QKCM_<FLAG_NAME>, -Dqkcm.<flag-name>=...); the command line wins.\n");
        sb.append("Flags marked [no effect] are accepted so upstream command lines keep working; qkcm does not act\n");
        sb.append("on them yet.\n");
        String section = null;
        for (Flag f : byName.values()) {
            if (!f.section().equals(section)) {
                section = f.section();
                sb.append('\n').append(section).append(" flags:\n\n");
            }
            String head = "  " + (f.shorthand().isEmpty() ? "    " : "-" + f.shorthand() + ", ") + "--" + f.name()
                    + (f.isBool() ? "" : " " + f.type());
            sb.append(head);
            String usage = f.implemented() ? f.usage()
                    : "[no effect]" + (NOTES.containsKey(f.name()) ? " " + NOTES.get(f.name()) : "");
            String dflt = f.defaultValue().isEmpty() || (f.isBool() && f.defaultValue().equals("false")) ? ""
                    : " (default " + (f.type().equals("string") ? "\"" + f.defaultValue() + "\"" : f.defaultValue()) + ")";
            sb.append(head.length() < 56 ? " ".repeat(56 - head.length()) : "\n" + " ".repeat(56));
            sb.append(usage).append(dflt).append('\n');
        }
        sb.append("\nControllers (--controllers), marked * when on by default, + when qkcm implements them and ~ when\n");
        sb.append("it implements them in part (what is missing follows the name):\n");
        for (String name : controllerNames) {
            sb.append("  ").append(disabledByDefault.contains(name) ? " " : "*")
                    .append(partial.containsKey(name) ? "~" : implemented.contains(name) ? "+" : " ").append(' ').append(name);
            if (partial.containsKey(name)) {
                sb.append(" (partial: ").append(partial.get(name)).append(')');
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
