package io.qkcm.runtime.protobuf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.testing.TestCsrs;
import io.qkcm.runtime.Json;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestNamespaces;

/**
 * The proof of the protobuf decoders: rich objects of every kind qkcm's informers hold (and that have a
 * descriptor) are created on the real kube-apiserver, read back in JSON (decoded by {@link Json#api()}) and
 * in protobuf (decoded by {@link KubernetesProtobuf}), and the two model objects must be equal and serialize
 * to the same JSON; the same for LIST, for a watch stream, and for a Status.
 */
class ProtobufApiServerTest {

    private static KubernetesClient client;
    private static String ns;

    @BeforeAll
    static void start() {
        client = RealApiServer.get().newClient();
        ns = TestNamespaces.newNamespace(client, "protobuf");
    }

    @AfterAll
    static void stop() {
        client.close();
    }

    /** A kind to create: its collection's path (namespaced ones with NS), the object (YAML), and a status. */
    record Case(String kind, String collection, String yaml, String statusPatch) {
        @Override
        public String toString() {
            return kind;
        }
    }

    private static final String POD_SPEC = """
              initContainers:
              - name: init
                image: busybox:1
                command: ["sh", "-c", "true"]
                restartPolicy: Always
                resources:
                  requests: {cpu: 10m, memory: 16Mi}
              containers:
              - name: app
                image: registry.k8s.io/pause:3.10
                args: ["--a", "--b=c"]
                workingDir: /w
                ports:
                - {name: http, containerPort: 8080, protocol: TCP, hostPort: 18080}
                - {containerPort: 9090, protocol: UDP}
                env:
                - {name: PLAIN, value: "v"}
                - {name: EMPTY, value: ""}
                - name: FROM_FIELD
                  valueFrom: {fieldRef: {fieldPath: metadata.name}}
                - name: FROM_RESOURCE
                  valueFrom: {resourceFieldRef: {containerName: app, resource: limits.memory, divisor: 1Mi}}
                envFrom:
                - configMapRef: {name: cm, optional: true}
                  prefix: CM_
                resources:
                  requests: {cpu: 250m, memory: 64Mi, ephemeral-storage: "1e3"}
                  limits: {cpu: "1.5", memory: 1Gi}
                volumeMounts:
                - {name: data, mountPath: /data, readOnly: false}
                - {name: cfg, mountPath: /cfg, subPath: x, readOnly: true}
                livenessProbe:
                  httpGet: {path: /healthz, port: 8080, scheme: HTTP, httpHeaders: [{name: X, value: "y"}]}
                  initialDelaySeconds: 0
                  periodSeconds: 7
                  terminationGracePeriodSeconds: 3
                readinessProbe:
                  tcpSocket: {port: http}
                  failureThreshold: 4
                startupProbe:
                  exec: {command: [cat, /tmp/ready]}
                lifecycle:
                  preStop:
                    sleep: {seconds: 2}
                securityContext:
                  runAsUser: 1000
                  runAsNonRoot: true
                  allowPrivilegeEscalation: false
                  capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
                  readOnlyRootFilesystem: true
                imagePullPolicy: IfNotPresent
                terminationMessagePolicy: FallbackToLogsOnError
                stdin: false
                tty: false
              volumes:
              - name: data
                emptyDir: {sizeLimit: 500Mi, medium: Memory}
              - name: cfg
                configMap:
                  name: cm
                  defaultMode: 0644
                  items: [{key: a, path: a.txt, mode: 0600}]
                  optional: false
              - name: proj
                projected:
                  sources:
                  - configMap: {name: cm, items: [{key: a, path: a}]}
                  - downwardAPI:
                      items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
              - name: host
                hostPath: {path: /var/x, type: DirectoryOrCreate}
              restartPolicy: Always
              terminationGracePeriodSeconds: 5
              dnsPolicy: ClusterFirst
              nodeSelector: {disk: ssd, zone: ""}
              automountServiceAccountToken: false
              enableServiceLinks: false
              hostname: h
              subdomain: s
              securityContext:
                fsGroup: 2000
                supplementalGroups: [1, 2, 3]
                sysctls: [{name: net.ipv4.ip_local_port_range, value: "1024 65535"}]
                seccompProfile: {type: RuntimeDefault}
              imagePullSecrets: [{name: pull}]
              affinity:
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                    - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]
                  preferredDuringSchedulingIgnoredDuringExecution:
                  - weight: 10
                    preference: {matchFields: [{key: metadata.name, operator: NotIn, values: [n0]}]}
                podAntiAffinity:
                  preferredDuringSchedulingIgnoredDuringExecution:
                  - weight: 100
                    podAffinityTerm:
                      topologyKey: kubernetes.io/hostname
                      labelSelector: {matchLabels: {app: x}}
              tolerations:
              - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
              - {key: k, operator: Equal, value: v, effect: NoSchedule}
              hostAliases: [{ip: 10.0.0.1, hostnames: [a, b]}]
              dnsConfig:
                nameservers: [1.1.1.1]
                options: [{name: ndots, value: "2"}, {name: edns0}]
              readinessGates: [{conditionType: example.com/ready}]
              topologySpreadConstraints:
              - maxSkew: 1
                topologyKey: zone
                whenUnsatisfiable: DoNotSchedule
                labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
                minDomains: 2
              schedulingGates: [{name: example.com/gate}]
              os: {name: linux}
            """;

    private static String podTemplate(String indent) {
        String spec = POD_SPEC.replaceAll("(?m)^", indent);
        return indent + "metadata:\n" + indent + "  labels: {app: x}\n" + indent + "  annotations: {a: b}\n"
                + indent + "spec:\n" + spec;
    }

    private static final String META = """
            metadata:
              name: %s
              labels: {app: x, tier: "", "example.com/k": v}
              annotations: {note: "multi\\nline", empty: ""}
              finalizers: [example.com/keep]
              ownerReferences:
              - {apiVersion: v1, kind: ConfigMap, name: owner, uid: 6a1c2e5b-0c1f-4f0c-9a3e-000000000001, controller: true, blockOwnerDeletion: false}
            """;

    private static String meta(String name) {
        return META.formatted(name);
    }

    static Stream<Case> cases() throws Exception {
        String bytes = Base64.getEncoder().encodeToString(new byte[] { 0, 1, 2, (byte) 0xff, (byte) 0xfe, 10 });
        String csr = Base64.getEncoder().encodeToString(
                TestCsrs.csrPem(TestCsrs.ecKey(), "CN=protobuf,O=qkcm").getBytes(StandardCharsets.US_ASCII));
        return Stream.of(
                new Case("Pod", "/api/v1/namespaces/NS/pods", "apiVersion: v1\nkind: Pod\n" + meta("pod") + "spec:\n"
                        + POD_SPEC, """
                        {"status":{"phase":"Running","qosClass":"Burstable","hostIP":"10.1.0.1","hostIPs":[{"ip":"10.1.0.1"}],
                         "podIP":"10.2.0.5","podIPs":[{"ip":"10.2.0.5"},{"ip":"fd00::5"}],"startTime":"2026-11-27T10:00:00Z",
                         "observedGeneration":1,
                         "conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:05Z"},
                                       {"type":"example.com/ready","status":"False","reason":"R","message":"m","lastTransitionTime":"2026-11-27T10:00:01Z"}],
                         "containerStatuses":[{"name":"app","ready":true,"restartCount":2,"image":"registry.k8s.io/pause:3.10",
                           "imageID":"sha256:abc","containerID":"containerd://1","started":true,
                           "state":{"running":{"startedAt":"2026-11-27T10:00:03Z"}},
                           "lastState":{"terminated":{"exitCode":-1,"signal":9,"reason":"Error","startedAt":"2026-11-27T09:00:00Z","finishedAt":"2026-11-27T09:59:59Z"}},
                           "allocatedResources":{"cpu":"250m"},
                           "resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"1500m","memory":"1Gi"}}}],
                         "initContainerStatuses":[{"name":"init","ready":false,"restartCount":0,"image":"busybox:1","imageID":"",
                           "state":{"waiting":{"reason":"PodInitializing"}}}]}}
                        """),
                new Case("ReplicaSet", "/apis/apps/v1/namespaces/NS/replicasets", "apiVersion: apps/v1\nkind: ReplicaSet\n"
                        + meta("rs") + """
                        spec:
                          replicas: 3
                          minReadySeconds: 5
                          selector:
                            matchLabels: {app: x}
                            matchExpressions: [{key: tier, operator: NotIn, values: [a, b]}]
                          template:
                        """ + podTemplate("    "), """
                        {"status":{"replicas":3,"fullyLabeledReplicas":3,"readyReplicas":2,"availableReplicas":0,
                         "terminatingReplicas":1,"observedGeneration":1,
                         "conditions":[{"type":"ReplicaFailure","status":"True","lastTransitionTime":"2026-11-27T10:00:00Z","reason":"FailedCreate","message":"quota"}]}}
                        """),
                new Case("Deployment", "/apis/apps/v1/namespaces/NS/deployments", "apiVersion: apps/v1\nkind: Deployment\n"
                        + meta("deploy") + """
                        spec:
                          replicas: 0
                          revisionHistoryLimit: 4
                          progressDeadlineSeconds: 120
                          paused: true
                          strategy:
                            type: RollingUpdate
                            rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
                          selector: {matchLabels: {app: x}}
                          template:
                        """ + podTemplate("    "), """
                        {"status":{"observedGeneration":1,"replicas":2,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,
                         "unavailableReplicas":1,"collisionCount":3,
                         "conditions":[{"type":"Progressing","status":"Unknown","lastUpdateTime":"2026-11-27T10:00:00Z",
                           "lastTransitionTime":"2026-11-27T09:00:00Z","reason":"DeploymentPaused","message":"paused"}]}}
                        """),
                new Case("Node", "/api/v1/nodes", """
                        apiVersion: v1
                        kind: Node
                        metadata:
                          name: protobuf-node
                          labels: {kubernetes.io/hostname: protobuf-node, node-role.kubernetes.io/worker: ""}
                          annotations: {node.alpha.kubernetes.io/ttl: "0"}
                        spec:
                          podCIDR: 10.244.1.0/24
                          podCIDRs: [10.244.1.0/24, "fd00:1::/64"]
                          providerID: kwok://protobuf-node
                          unschedulable: true
                          taints:
                          - {key: node.kubernetes.io/unschedulable, effect: NoSchedule, timeAdded: "2026-11-27T10:00:00Z"}
                          - {key: dedicated, value: gpu, effect: NoExecute}
                        """, """
                        {"status":{"capacity":{"cpu":"8","memory":"32Gi","pods":"110","ephemeral-storage":"100G","example.com/dev":"0"},
                         "allocatable":{"cpu":"7800m","memory":"31.5Gi","pods":"110"},
                         "phase":"Running",
                         "conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-27T10:00:00Z","lastTransitionTime":"2026-11-26T10:00:00Z","reason":"KubeletReady","message":"ok"},
                                       {"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-27T10:00:00Z","lastTransitionTime":"2026-11-26T10:00:00Z"}],
                         "addresses":[{"type":"InternalIP","address":"10.1.0.1"},{"type":"Hostname","address":"protobuf-node"}],
                         "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
                         "nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1","osImage":"x","containerRuntimeVersion":"containerd://2",
                           "kubeletVersion":"v1.34.4","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64","swap":{"capacity":0}},
                         "images":[{"names":["registry.k8s.io/pause:3.10"],"sizeBytes":5123456789012}],
                         "volumesInUse":["kubernetes.io/csi/x^y"],
                         "volumesAttached":[{"name":"kubernetes.io/csi/x^y","devicePath":""}],
                         "features":{"supplementalGroupsPolicy":true}}}
                        """),
                new Case("Service", "/api/v1/namespaces/NS/services", "apiVersion: v1\nkind: Service\n" + meta("svc") + """
                        spec:
                          type: LoadBalancer
                          allocateLoadBalancerNodePorts: true
                          selector: {app: x}
                          ports:
                          - {name: http, port: 80, targetPort: http, protocol: TCP}
                          - {name: metrics, port: 9090, targetPort: 9091}
                          sessionAffinity: ClientIP
                          sessionAffinityConfig: {clientIP: {timeoutSeconds: 600}}
                          externalTrafficPolicy: Local
                          internalTrafficPolicy: Cluster
                          publishNotReadyAddresses: true
                          ipFamilyPolicy: SingleStack
                        """, """
                        {"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4","ipMode":"VIP","ports":[{"port":80,"protocol":"TCP"}]}]},
                         "conditions":[{"type":"T","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-27T10:00:00Z","reason":"R","message":""}]}}
                        """),
                new Case("Endpoints", "/api/v1/namespaces/NS/endpoints", "apiVersion: v1\nkind: Endpoints\n" + meta("ep") + """
                        subsets:
                        - addresses: [{ip: 10.2.0.5, nodeName: n1, targetRef: {kind: Pod, name: p, namespace: x, uid: u}}]
                          notReadyAddresses: [{ip: 10.2.0.6, hostname: h}]
                          ports: [{name: http, port: 8080, protocol: TCP, appProtocol: http}]
                        """, null),
                new Case("Namespace", "/api/v1/namespaces", """
                        apiVersion: v1
                        kind: Namespace
                        metadata: {name: protobuf-ns, labels: {a: b}}
                        spec: {finalizers: [kubernetes]}
                        """, """
                        {"status":{"phase":"Active","conditions":[{"type":"NamespaceDeletionDiscoveryFailure","status":"False","lastTransitionTime":"2026-11-27T10:00:00Z","reason":"ResourcesDiscovered","message":"ok"}]}}
                        """),
                new Case("ServiceAccount", "/api/v1/namespaces/NS/serviceaccounts", "apiVersion: v1\nkind: ServiceAccount\n"
                        + meta("sa") + """
                        automountServiceAccountToken: false
                        secrets: [{name: s1}, {name: s2, namespace: x}]
                        imagePullSecrets: [{name: pull}]
                        """, null),
                new Case("Secret", "/api/v1/namespaces/NS/secrets", "apiVersion: v1\nkind: Secret\n" + meta("secret")
                        + "type: example.com/opaque\nimmutable: false\ndata: {bin: " + bytes + ", empty: \"\"}\n"
                        + "stringData: {text: hello}\n", null),
                new Case("ConfigMap", "/api/v1/namespaces/NS/configmaps", "apiVersion: v1\nkind: ConfigMap\n"
                        + meta("cm") + "immutable: true\ndata: {a: \"1\", b: \"\", c: \"x: y\\n\"}\nbinaryData: {bin: " + bytes
                        + "}\n", null),
                new Case("PersistentVolume", "/api/v1/persistentvolumes", """
                        apiVersion: v1
                        kind: PersistentVolume
                        metadata: {name: protobuf-pv, labels: {a: b}}
                        spec:
                          capacity: {storage: 10Gi}
                          accessModes: [ReadWriteOnce, ReadOnlyMany]
                          persistentVolumeReclaimPolicy: Retain
                          storageClassName: fast
                          volumeMode: Filesystem
                          mountOptions: [ro, soft]
                          claimRef: {kind: PersistentVolumeClaim, namespace: x, name: c, uid: u, apiVersion: v1, resourceVersion: "1"}
                          csi:
                            driver: csi.example.com
                            volumeHandle: vol-1
                            readOnly: true
                            fsType: ext4
                            volumeAttributes: {a: b}
                            nodePublishSecretRef: {name: s, namespace: x}
                          nodeAffinity:
                            required:
                              nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
                        """, """
                        {"status":{"phase":"Released","message":"m","reason":"r","lastPhaseTransitionTime":"2026-11-27T10:00:00Z"}}
                        """),
                new Case("PersistentVolumeClaim", "/api/v1/namespaces/NS/persistentvolumeclaims",
                        "apiVersion: v1\nkind: PersistentVolumeClaim\n" + meta("pvc") + """
                        spec:
                          accessModes: [ReadWriteOnce]
                          resources: {requests: {storage: 5Gi}, limits: {storage: 10Gi}}
                          storageClassName: ""
                          volumeMode: Block
                          selector: {matchLabels: {a: b}}
                          dataSource: {kind: VolumeSnapshot, name: snap, apiGroup: snapshot.storage.k8s.io}
                        """, """
                        {"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"5Gi"},
                         "allocatedResources":{"storage":"5Gi"},"allocatedResourceStatuses":{"storage":"ControllerResizeInProgress"},
                         "conditions":[{"type":"Resizing","status":"True","lastProbeTime":"2026-11-27T10:00:00Z","lastTransitionTime":"2026-11-27T10:00:00Z"}]}}
                        """),
                new Case("ResourceQuota", "/api/v1/namespaces/NS/resourcequotas", "apiVersion: v1\nkind: ResourceQuota\n"
                        + meta("quota") + """
                        spec:
                          hard: {pods: "10", requests.cpu: "4", limits.memory: 8Gi, count/deployments.apps: "5"}
                          scopeSelector:
                            matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]
                        """, """
                        {"status":{"hard":{"pods":"10","requests.cpu":"4"},"used":{"pods":"0","requests.cpu":"0"}}}
                        """),
                new Case("ReplicationController", "/api/v1/namespaces/NS/replicationcontrollers",
                        "apiVersion: v1\nkind: ReplicationController\n" + meta("rc") + """
                        spec:
                          replicas: 2
                          minReadySeconds: 1
                          selector: {app: x}
                          template:
                        """ + podTemplate("    "), """
                        {"status":{"replicas":2,"readyReplicas":1,"availableReplicas":1,"fullyLabeledReplicas":2,"observedGeneration":1}}
                        """),
                new Case("Event", "/api/v1/namespaces/NS/events", "apiVersion: v1\nkind: Event\n" + meta("ev") + """
                        involvedObject: {kind: Pod, namespace: "@NS@", name: p, uid: u, apiVersion: v1, fieldPath: "spec.containers{app}"}
                        reason: Started
                        message: "started container"
                        source: {component: kubelet, host: n1}
                        firstTimestamp: "2026-11-27T10:00:00Z"
                        lastTimestamp: "2026-11-27T10:05:00Z"
                        count: 3
                        type: Normal
                        eventTime: "2026-11-27T10:00:00.123456Z"
                        series: {count: 2, lastObservedTime: "2026-11-27T10:05:00.000001Z"}
                        action: Start
                        reportingComponent: kubelet
                        reportingInstance: n1
                        related: {kind: Node, name: n1}
                        """, null),
                new Case("PodTemplate", "/api/v1/namespaces/NS/podtemplates", "apiVersion: v1\nkind: PodTemplate\n"
                        + meta("pt") + "template:\n" + podTemplate("  "), null),
                new Case("LimitRange", "/api/v1/namespaces/NS/limitranges", "apiVersion: v1\nkind: LimitRange\n"
                        + meta("lr") + """
                        spec:
                          limits:
                          - type: Container
                            default: {cpu: 500m, memory: 256Mi}
                            defaultRequest: {cpu: 100m}
                            max: {cpu: "2"}
                            min: {cpu: 10m}
                            maxLimitRequestRatio: {memory: "100"}
                        """, null),
                new Case("DaemonSet", "/apis/apps/v1/namespaces/NS/daemonsets", "apiVersion: apps/v1\nkind: DaemonSet\n"
                        + meta("ds") + """
                        spec:
                          selector: {matchLabels: {app: x}}
                          updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 10%, maxSurge: 0}}
                          minReadySeconds: 3
                          revisionHistoryLimit: 2
                          template:
                        """ + podTemplate("    "), """
                        {"status":{"currentNumberScheduled":1,"numberMisscheduled":0,"desiredNumberScheduled":2,"numberReady":1,
                         "observedGeneration":1,"updatedNumberScheduled":1,"numberAvailable":1,"numberUnavailable":1,"collisionCount":0}}
                        """),
                new Case("StatefulSet", "/apis/apps/v1/namespaces/NS/statefulsets", "apiVersion: apps/v1\nkind: StatefulSet\n"
                        + meta("sts") + """
                        spec:
                          replicas: 2
                          serviceName: svc
                          podManagementPolicy: Parallel
                          selector: {matchLabels: {app: x}}
                          updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}
                          persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
                          ordinals: {start: 3}
                          volumeClaimTemplates:
                          - metadata: {name: data, labels: {a: b}}
                            spec:
                              accessModes: [ReadWriteOnce]
                              resources: {requests: {storage: 1Gi}}
                          template:
                        """ + podTemplate("    "), """
                        {"status":{"replicas":2,"readyReplicas":1,"currentReplicas":2,"updatedReplicas":1,"currentRevision":"sts-1",
                         "updateRevision":"sts-2","observedGeneration":1,"collisionCount":1,"availableReplicas":1}}
                        """),
                new Case("ControllerRevision", "/apis/apps/v1/namespaces/NS/controllerrevisions",
                        "apiVersion: apps/v1\nkind: ControllerRevision\n" + meta("cr") + """
                        revision: 7
                        data:
                          spec:
                            template:
                              $patch: replace
                              metadata: {labels: {app: x}}
                              spec: {containers: [{name: app, image: "i:1", ports: [{containerPort: 80}]}]}
                        """, null),
                new Case("Job", "/apis/batch/v1/namespaces/NS/jobs", "apiVersion: batch/v1\nkind: Job\n" + meta("job") + """
                        spec:
                          parallelism: 2
                          completions: 4
                          completionMode: Indexed
                          backoffLimitPerIndex: 1
                          maxFailedIndexes: 2
                          activeDeadlineSeconds: 100
                          ttlSecondsAfterFinished: 0
                          suspend: false
                          podReplacementPolicy: Failed
                          manualSelector: false
                          podFailurePolicy:
                            rules:
                            - action: FailJob
                              onExitCodes: {containerName: app, operator: In, values: [42]}
                            - action: Ignore
                              onPodConditions: [{type: DisruptionTarget, status: "True"}]
                          template:
                            metadata: {labels: {app: x}}
                            spec:
                              restartPolicy: Never
                              containers: [{name: app, image: "i:1", resources: {requests: {cpu: 100m}}}]
                        """, """
                        {"status":{"active":1,"succeeded":2,"ready":0,"completedIndexes":"0,2","startTime":"2026-11-27T10:00:00Z"}}
                        """),
                new Case("CronJob", "/apis/batch/v1/namespaces/NS/cronjobs", "apiVersion: batch/v1\nkind: CronJob\n"
                        + meta("cron") + """
                        spec:
                          schedule: "*/5 * * * *"
                          timeZone: Europe/Paris
                          startingDeadlineSeconds: 30
                          concurrencyPolicy: Forbid
                          suspend: false
                          successfulJobsHistoryLimit: 0
                          failedJobsHistoryLimit: 2
                          jobTemplate:
                            metadata: {labels: {a: b}}
                            spec:
                              backoffLimit: 0
                              template:
                                spec:
                                  restartPolicy: OnFailure
                                  containers: [{name: app, image: "i:1"}]
                        """, """
                        {"status":{"active":[{"kind":"Job","namespace":"x","name":"j","uid":"u","apiVersion":"batch/v1","resourceVersion":"5"}],
                         "lastScheduleTime":"2026-11-27T10:00:00Z","lastSuccessfulTime":"2026-11-27T09:55:00Z"}}
                        """),
                new Case("PodDisruptionBudget", "/apis/policy/v1/namespaces/NS/poddisruptionbudgets",
                        "apiVersion: policy/v1\nkind: PodDisruptionBudget\n" + meta("pdb") + """
                        spec:
                          minAvailable: 50%
                          selector: {matchLabels: {app: x}}
                          unhealthyPodEvictionPolicy: AlwaysAllow
                        """, """
                        {"status":{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":2,"expectedPods":3,
                         "disruptedPods":{"p1":"2026-11-27T10:00:00Z"},
                         "conditions":[{"type":"DisruptionAllowed","status":"False","observedGeneration":1,"lastTransitionTime":"2026-11-27T10:00:00Z","reason":"InsufficientPods","message":""}]}}
                        """),
                new Case("CertificateSigningRequest", "/apis/certificates.k8s.io/v1/certificatesigningrequests", """
                        apiVersion: certificates.k8s.io/v1
                        kind: CertificateSigningRequest
                        metadata: {name: protobuf-csr}
                        spec:
                          signerName: example.com/signer
                          expirationSeconds: 86400
                          usages: [digital signature, client auth]
                          request: %s
                        """.formatted(csr), null),
                new Case("HorizontalPodAutoscaler", "/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers",
                        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n" + meta("hpa") + """
                        spec:
                          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
                          minReplicas: 1
                          maxReplicas: 10
                          metrics:
                          - type: Resource
                            resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
                          - type: Pods
                            pods:
                              metric: {name: qps, selector: {matchLabels: {a: b}}}
                              target: {type: AverageValue, averageValue: 1500m}
                          behavior:
                            scaleUp:
                              stabilizationWindowSeconds: 0
                              selectPolicy: Max
                              policies: [{type: Percent, value: 100, periodSeconds: 15}]
                            scaleDown:
                              tolerance: 50m
                              policies: [{type: Pods, value: 1, periodSeconds: 60}]
                        """, """
                        {"status":{"observedGeneration":1,"lastScaleTime":"2026-11-27T10:00:00Z","currentReplicas":2,"desiredReplicas":3,
                         "currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":80,"averageValue":"200m"}}}],
                         "conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-11-27T10:00:00Z","reason":"R","message":"m"}]}}
                        """),
                new Case("StorageClass", "/apis/storage.k8s.io/v1/storageclasses", """
                        apiVersion: storage.k8s.io/v1
                        kind: StorageClass
                        metadata: {name: protobuf-sc, annotations: {storageclass.kubernetes.io/is-default-class: "false"}}
                        provisioner: csi.example.com
                        parameters: {type: gp3, iops: "3000"}
                        reclaimPolicy: Retain
                        allowVolumeExpansion: true
                        mountOptions: [debug]
                        volumeBindingMode: WaitForFirstConsumer
                        allowedTopologies:
                        - matchLabelExpressions: [{key: zone, values: [a, b]}]
                        """, null),
                new Case("CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", """
                        apiVersion: storage.k8s.io/v1
                        kind: CSIDriver
                        metadata: {name: csi.protobuf.example.com}
                        spec:
                          attachRequired: false
                          podInfoOnMount: true
                          volumeLifecycleModes: [Persistent, Ephemeral]
                          storageCapacity: true
                          fsGroupPolicy: File
                          tokenRequests: [{audience: a, expirationSeconds: 3600}]
                          requiresRepublish: false
                          seLinuxMount: true
                        """, null),
                new Case("VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments", """
                        apiVersion: storage.k8s.io/v1
                        kind: VolumeAttachment
                        metadata: {name: protobuf-va}
                        spec:
                          attacher: csi.example.com
                          nodeName: n1
                          source: {persistentVolumeName: pv1}
                        """, """
                        {"status":{"attached":true,"attachmentMetadata":{"a":"b"},
                         "attachError":{"time":"2026-11-27T10:00:00Z","message":"m","errorCode":5}}}
                        """),
                new Case("ClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles", """
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRole
                        metadata: {name: protobuf-role, labels: {a: b}}
                        rules:
                        - apiGroups: ["", apps]
                          resources: [pods, deployments/scale]
                          verbs: [get, list, watch]
                          resourceNames: [x]
                        - nonResourceURLs: [/healthz]
                          verbs: [get]
                        """, null),
                new Case("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", """
                        apiVersion: scheduling.k8s.io/v1
                        kind: PriorityClass
                        metadata: {name: protobuf-priority}
                        value: -5
                        globalDefault: false
                        preemptionPolicy: Never
                        description: low
                        """, null),
                new Case("EndpointSlice", "/apis/discovery.k8s.io/v1/namespaces/NS/endpointslices",
                        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n" + meta("slice") + """
                        addressType: IPv4
                        endpoints:
                        - addresses: [10.2.0.5]
                          conditions: {ready: true, serving: true, terminating: false}
                          hostname: h
                          nodeName: n1
                          zone: a
                          targetRef: {kind: Pod, namespace: x, name: p, uid: u}
                          hints: {forZones: [{name: a}], forNodes: [{name: n1}]}
                        - addresses: [10.2.0.6]
                          conditions: {ready: false}
                        ports:
                        - {name: http, port: 8080, protocol: TCP, appProtocol: http}
                        - {name: "", port: 53, protocol: UDP}
                        """, null),
                new Case("Lease", "/apis/coordination.k8s.io/v1/namespaces/NS/leases",
                        "apiVersion: coordination.k8s.io/v1\nkind: Lease\n" + meta("lease") + """
                        spec:
                          holderIdentity: qkcm_1
                          leaseDurationSeconds: 15
                          acquireTime: "2026-11-27T10:00:00.123456Z"
                          renewTime: "2026-11-27T10:00:10.000001Z"
                          leaseTransitions: 0
                        """, null),
                new Case("events.k8s.io Event", "/apis/events.k8s.io/v1/namespaces/NS/events",
                        "apiVersion: events.k8s.io/v1\nkind: Event\n" + meta("ev2") + """
                        eventTime: "2026-11-27T10:00:00.123456Z"
                        series: {count: 2, lastObservedTime: "2026-11-27T10:05:00.000001Z"}
                        reportingController: example.com/c
                        reportingInstance: i1
                        action: Sync
                        reason: Synced
                        regarding: {kind: Pod, namespace: "@NS@", name: p, uid: u, apiVersion: v1}
                        related: {kind: Node, name: n1}
                        note: "a note"
                        type: Warning
                        """, null),
                new Case("ValidatingAdmissionPolicy",
                        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", """
                        apiVersion: admissionregistration.k8s.io/v1
                        kind: ValidatingAdmissionPolicy
                        metadata: {name: protobuf-vap, labels: {a: b}}
                        spec:
                          failurePolicy: Fail
                          paramKind: {apiVersion: v1, kind: ConfigMap}
                          matchConstraints:
                            resourceRules:
                            - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments], scope: "*"}
                            namespaceSelector: {matchLabels: {team: a}}
                            matchPolicy: Equivalent
                          variables: [{name: replicas, expression: "object.spec.replicas"}]
                          validations:
                          - {expression: "variables.replicas <= 5", message: "too many", reason: Invalid}
                          auditAnnotations: [{key: replicas, valueExpression: "string(variables.replicas)"}]
                          matchConditions: [{name: not-system, expression: "!object.metadata.name.startsWith('system')"}]
                        """, null),
                new Case("IPAddress", "/apis/networking.k8s.io/v1/ipaddresses", """
                        apiVersion: networking.k8s.io/v1
                        kind: IPAddress
                        metadata: {name: 10.96.100.17}
                        spec: {parentRef: {group: "", resource: services, namespace: default, name: kubernetes}}
                        """, null),
                new Case("Ingress", "/apis/networking.k8s.io/v1/namespaces/NS/ingresses",
                        "apiVersion: networking.k8s.io/v1\nkind: Ingress\n" + meta("ing") + """
                        spec:
                          ingressClassName: nginx
                          defaultBackend: {service: {name: svc, port: {number: 80}}}
                          tls: [{hosts: [a.example.com], secretName: tls}]
                          rules:
                          - host: a.example.com
                            http:
                              paths:
                              - {path: /, pathType: Prefix, backend: {service: {name: svc, port: {name: http}}}}
                              - {path: /r, pathType: Exact, backend: {resource: {apiGroup: example.com, kind: B, name: b}}}
                        """, null),
                new Case("NetworkPolicy", "/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies",
                        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n" + meta("np") + """
                        spec:
                          podSelector: {matchLabels: {app: x}}
                          policyTypes: [Ingress, Egress]
                          ingress:
                          - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}, {namespaceSelector: {}}]
                            ports: [{protocol: TCP, port: 80, endPort: 90}, {port: http}]
                          egress: [{}]
                        """, null),
                new Case("CSINode", "/apis/storage.k8s.io/v1/csinodes", """
                        apiVersion: storage.k8s.io/v1
                        kind: CSINode
                        metadata: {name: protobuf-csinode}
                        spec:
                          drivers:
                          - {name: csi.example.com, nodeID: n1, topologyKeys: [zone], allocatable: {count: 0}}
                        """, null),
                new Case("Role", "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/roles",
                        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n" + meta("role") + """
                        rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
                        """, null),
                new Case("RoleBinding", "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/rolebindings",
                        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n" + meta("rb") + """
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role}
                        subjects:
                        - {kind: ServiceAccount, name: default, namespace: "@NS@"}
                        - {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
                        """, null),
                new Case("ClusterRoleBinding", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", """
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRoleBinding
                        metadata: {name: protobuf-crb}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: protobuf-role}
                        subjects: [{kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}]
                        """, null),
                new Case("ServiceCIDR", "/apis/networking.k8s.io/v1/servicecidrs", """
                        apiVersion: networking.k8s.io/v1
                        kind: ServiceCIDR
                        metadata: {name: protobuf-cidr}
                        spec: {cidrs: [10.96.100.0/24]}
                        """, null));
    }

    private static String path(Case c) {
        return c.collection().replace("NS", ns);
    }

    private static HttpResponse<byte[]> send(HttpRequest.Builder request) throws Exception {
        return client.getHttpClient().sendAsync(request.build(), byte[].class).get(60, TimeUnit.SECONDS);
    }

    private static HttpRequest.Builder request(String path) {
        return client.getHttpClient().newHttpRequestBuilder().uri(client.getMasterUrl() + path.substring(1));
    }

    private static byte[] get(String path, String accept) throws Exception {
        HttpResponse<byte[]> response = send(request(path).header("Accept", accept));
        assertThat(response.code()).as(() -> new String(response.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        assertThat(response.header("Content-Type")).startsWith(accept);
        return response.body();
    }

    private static String create(Case c) throws Exception {
        HttpResponse<byte[]> created = send(request(path(c)).post("application/yaml",
                c.yaml().replace("@NS@", ns).getBytes(StandardCharsets.UTF_8)));
        assertThat(created.code()).as(() -> c.kind() + ": " + new String(created.body(), StandardCharsets.UTF_8))
                .isEqualTo(201);
        String name = Json.mapper().readTree(created.body()).at("/metadata/name").asText();
        if (c.statusPatch() != null) {
            HttpResponse<byte[]> patched = send(request(path(c) + "/" + name + "/status")
                    .patch("application/merge-patch+json", c.statusPatch()));
            assertThat(patched.code()).as(() -> c.kind() + " status: " + new String(patched.body(), StandardCharsets.UTF_8))
                    .isEqualTo(200);
        }
        return name;
    }

    /** GET of one object: the protobuf decoding equals fabric8's decoding of the JSON, field for field. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void objectDecodesAsItsJson(Case c) throws Exception {
        String path = path(c) + "/" + create(c);
        Object fromJson = Json.api().unmarshal(new String(get(path, "application/json"), StandardCharsets.UTF_8),
                io.fabric8.kubernetes.api.model.KubernetesResource.class);
        Object fromProtobuf = KubernetesProtobuf.decode(get(path, KubernetesProtobuf.MEDIA_TYPE));
        assertThat(fromProtobuf).isInstanceOf(fromJson.getClass());
        assertThat(Json.api().asJson(fromProtobuf)).isEqualTo(Json.api().asJson(fromJson));
        assertThat(fromProtobuf).isEqualTo(fromJson);
        if (!c.kind().equals("CertificateSigningRequest")) { // its strategy keeps no managedFields
            assertThat(((io.fabric8.kubernetes.api.model.HasMetadata) fromProtobuf).getMetadata().getManagedFields())
                    .as("managedFields (FieldsV1) decoded").isNotEmpty();
        }

        // the LIST of the same collection: ListMeta and items
        Object listFromJson = Json.api().unmarshal(new String(get(path(c), "application/json"), StandardCharsets.UTF_8),
                io.fabric8.kubernetes.api.model.KubernetesResource.class);
        Object listFromProtobuf = KubernetesProtobuf.decode(get(path(c), KubernetesProtobuf.MEDIA_TYPE));
        assertThat(listFromProtobuf).isInstanceOf(KubernetesResourceList.class).isInstanceOf(listFromJson.getClass());
        assertThat(((KubernetesResourceList<?>) listFromProtobuf).getItems()).isNotEmpty();
        assertThat(Json.api().asJson(listFromProtobuf)).isEqualTo(Json.api().asJson(listFromJson));
        assertThat(listFromProtobuf).isEqualTo(listFromJson);
    }

    /**
     * Encoding: the object read in JSON, renamed and without its server-set metadata, is created on the API
     * server with a protobuf body; the API server then holds the same object (spec, data, rules...) as the
     * original, and its protobuf form decodes to what was encoded.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void objectEncodesAsTheApiServerAcceptsIt(Case c) throws Exception {
        // an IPAddress's name is its address
        boolean ip = c.kind().equals("IPAddress");
        String name = create(new Case(c.kind(), c.collection(), ip ? c.yaml().replace("10.96.100.17", "10.96.100.18")
                : c.yaml().replaceFirst("metadata:(\\s*\\{?\\s*)name: ", "metadata:$1name: enc-"), null));
        String pbName = ip ? "10.96.100.19" : "pb-" + name;
        io.fabric8.kubernetes.api.model.HasMetadata original = Json.api().unmarshal(
                new String(get(path(c) + "/" + name, "application/json"), StandardCharsets.UTF_8),
                io.fabric8.kubernetes.api.model.HasMetadata.class);

        // the original without what the API server set on it (metadata, status, allocations), renamed
        io.fabric8.kubernetes.api.model.HasMetadata copy = Json.api().unmarshal(
                comparable(c, Json.api().asJson(original)).toString(), io.fabric8.kubernetes.api.model.HasMetadata.class);
        ObjectMeta meta = copy.getMetadata();
        meta.setName(pbName);
        byte[] body = KubernetesProtobuf.encode(copy);
        // what was encoded decodes back to the same JSON (the decoder yields the API server's own forms,
        // e.g. [] where the copy has null, which JSON does not tell apart)
        assertThat(Json.api().asJson(KubernetesProtobuf.decode(body))).isEqualTo(Json.api().asJson(copy));

        HttpResponse<byte[]> created = send(request(path(c)).header("Accept", "application/json")
                .post(KubernetesProtobuf.MEDIA_TYPE, body));
        assertThat(created.code()).as(() -> c.kind() + ": " + new String(created.body(), StandardCharsets.UTF_8))
                .isEqualTo(201);
        com.fasterxml.jackson.databind.node.ObjectNode before = comparable(c, Json.api().asJson(original));
        // both through fabric8's model, which writes no nulls and no empty objects
        com.fasterxml.jackson.databind.node.ObjectNode after = comparable(c, Json.api().asJson(Json.api().unmarshal(
                new String(get(path(c) + "/" + pbName, "application/json"), StandardCharsets.UTF_8),
                io.fabric8.kubernetes.api.model.HasMetadata.class)));
        assertThat(after).isEqualTo(before);
    }

    /** An object's JSON without what the API server sets on each object (metadata, status, allocations). */
    private static com.fasterxml.jackson.databind.node.ObjectNode comparable(Case c, String json) throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode node = (com.fasterxml.jackson.databind.node.ObjectNode) Json.mapper()
                .readTree(json);
        com.fasterxml.jackson.databind.node.ObjectNode meta = (com.fasterxml.jackson.databind.node.ObjectNode) node.get("metadata");
        for (String f : List.of("name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")) {
            meta.remove(f);
        }
        node.remove("status");
        if (c.kind().equals("Namespace")) {
            ((com.fasterxml.jackson.databind.node.ObjectNode) meta.get("labels")).remove("kubernetes.io/metadata.name");
        }
        if (c.kind().equals("Service")) {
            com.fasterxml.jackson.databind.node.ObjectNode spec = (com.fasterxml.jackson.databind.node.ObjectNode) node.get("spec");
            spec.remove(List.of("clusterIP", "clusterIPs", "healthCheckNodePort"));
            spec.get("ports").forEach(port -> ((com.fasterxml.jackson.databind.node.ObjectNode) port).remove("nodePort"));
        }
        if (c.kind().equals("Job")) { // the selector and labels carry the Job's own uid
            com.fasterxml.jackson.databind.node.ObjectNode spec = (com.fasterxml.jackson.databind.node.ObjectNode) node.get("spec");
            spec.remove("selector");
            ((com.fasterxml.jackson.databind.node.ObjectNode) spec.get("template")).remove("metadata");
        }
        return node;
    }

    private static List<byte[]> framesOf(byte[] stream) throws java.io.IOException {
        ProtobufWatchFrames frames = new ProtobufWatchFrames(new java.io.ByteArrayInputStream(stream));
        List<byte[]> all = new ArrayList<>();
        for (byte[] frame; (frame = frames.next()) != null;) {
            all.add(frame);
        }
        return all;
    }

    /** A status update (PUT .../status) with a protobuf body: the API server stores the status sent. */
    @Test
    void statusUpdateInProtobuf() throws Exception {
        Case c = new Case("Pod", "/api/v1/namespaces/NS/pods", "apiVersion: v1\nkind: Pod\n" + meta("status-pod")
                + "spec:\n" + POD_SPEC, null);
        String path = path(c) + "/" + create(c);
        Pod pod = KubernetesProtobuf.decode(get(path, KubernetesProtobuf.MEDIA_TYPE), Pod.class);
        pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running")
                .withQosClass(pod.getStatus().getQosClass()) // set by the API server at creation
                .withStartTime("2026-11-27T10:00:00Z").withPodIP("10.2.0.9")
                .addNewPodIP("10.2.0.9")
                .addNewCondition().withType("Ready").withStatus("False").withReason("NotReady")
                .withLastTransitionTime("2026-11-27T10:00:01Z").endCondition()
                .addNewContainerStatus().withName("app").withImage("registry.k8s.io/pause:3.10").withImageID("")
                .withReady(false).withRestartCount(3)
                .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState()
                .endContainerStatus().build());
        byte[] body = KubernetesProtobuf.encode(pod);
        HttpResponse<byte[]> updated = send(request(path + "/status").header("Accept", "application/json")
                .put(KubernetesProtobuf.MEDIA_TYPE, new java.io.ByteArrayInputStream(body), body.length));
        assertThat(updated.code()).as(() -> new String(updated.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        Pod stored = Json.api().unmarshal(new String(get(path, "application/json"), StandardCharsets.UTF_8), Pod.class);
        // lastState is a Go struct, not a pointer: the API server writes the unset one as {}
        pod.getStatus().getContainerStatuses().get(0).setLastState(new io.fabric8.kubernetes.api.model.ContainerState());
        assertThat(stored.getStatus()).isEqualTo(pod.getStatus());
    }

    /** An empty LIST: the API server writes its items as [], not null, in JSON. */
    @Test
    void emptyListDecodesAsItsJson() throws Exception {
        String empty = TestNamespaces.newNamespace(client, "protobuf-empty");
        String path = "/apis/apps/v1/namespaces/" + empty + "/deployments";
        Object fromJson = Json.api().unmarshal(new String(get(path, "application/json"), StandardCharsets.UTF_8),
                io.fabric8.kubernetes.api.model.KubernetesResource.class);
        Object fromProtobuf = KubernetesProtobuf.decode(get(path, KubernetesProtobuf.MEDIA_TYPE));
        assertThat(((KubernetesResourceList<?>) fromJson).getItems()).isNotNull().isEmpty();
        assertThat(fromProtobuf).isEqualTo(fromJson);
    }

    /** An error body (404) in protobuf is a Status, decoded as JSON decodes it. */
    @Test
    void statusDecodesAsItsJson() throws Exception {
        String path = "/api/v1/namespaces/" + ns + "/pods/does-not-exist";
        HttpResponse<byte[]> json = send(request(path).header("Accept", "application/json"));
        HttpResponse<byte[]> proto = send(request(path).header("Accept", KubernetesProtobuf.MEDIA_TYPE));
        assertThat(proto.code()).isEqualTo(404);
        Status fromJson = Json.api().unmarshal(new String(json.body(), StandardCharsets.UTF_8), Status.class);
        Status fromProtobuf = KubernetesProtobuf.decode(proto.body(), Status.class);
        assertThat(fromProtobuf.getReason()).isEqualTo("NotFound");
        assertThat(fromProtobuf).isEqualTo(fromJson);
    }

    /**
     * A watch in protobuf (create, update, delete of a pod) yields the events a JSON watch from the same
     * resourceVersion yields, frame by frame, with equal objects.
     */
    @Test
    void watchFramesDecodeAsTheJsonWatch() throws Exception {
        // a namespace of its own: the other tests' LimitRange and quota do not apply here
        String watchNs = TestNamespaces.newNamespace(client, "protobuf-watch");
        String pods = "/api/v1/namespaces/" + watchNs + "/pods";
        PodList before = KubernetesProtobuf.decode(get(pods, KubernetesProtobuf.MEDIA_TYPE), PodList.class);
        String rv = before.getMetadata().getResourceVersion();
        Case watched = new Case("Pod", pods, "apiVersion: v1\nkind: Pod\n" + meta("watched") + "spec:\n" + POD_SPEC, null);
        create(watched);
        Pod pod = client.pods().inNamespace(watchNs).withName("watched").get();
        pod.getMetadata().getLabels().put("changed", "yes");
        pod.getMetadata().setFinalizers(List.of());
        client.pods().inNamespace(watchNs).resource(pod).update();
        client.pods().inNamespace(watchNs).withName("watched").withGracePeriod(0).delete();

        String watch = pods + "?watch=1&resourceVersion=" + rv + "&timeoutSeconds=3&fieldSelector=metadata.name%3Dwatched";
        CompletableFuture<HttpResponse<InputStream>> protoStream = client.getHttpClient().sendAsync(
                request(watch).header("Accept", KubernetesProtobuf.MEDIA_TYPE).build(), InputStream.class);
        HttpResponse<byte[]> jsonWatch = send(request(watch).header("Accept", "application/json"));
        List<WatchEvent> fromJson = new ArrayList<>();
        List<WatchEvent> forCacheFromJson = new ArrayList<>();
        for (String line : new String(jsonWatch.body(), StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                forCacheFromJson.add(Json.api().unmarshal(line, WatchEvent.class));
                // the event's object decoded in full (Json.api()'s WatchEvent decoding drops managedFields, as
                // it does for every object bound for an informer's cache)
                com.fasterxml.jackson.databind.JsonNode event = Json.mapper().readTree(line);
                fromJson.add(new WatchEvent(Json.api().unmarshal(event.get("object").toString(), Pod.class),
                        event.get("type").asText()));
            }
        }
        HttpResponse<InputStream> proto = protoStream.get(60, TimeUnit.SECONDS);
        assertThat(proto.header("Content-Type")).isEqualTo(KubernetesProtobuf.WATCH_MEDIA_TYPE);
        List<WatchEvent> fromProtobuf = new ArrayList<>();
        byte[] all;
        try (InputStream in = proto.body()) {
            all = in.readAllBytes();
        }
        ProtobufWatchFrames frames = new ProtobufWatchFrames(new java.io.ByteArrayInputStream(all));
        for (byte[] frame; (frame = frames.next()) != null;) {
            fromProtobuf.add(KubernetesProtobuf.decodeWatchEvent(frame));
        }
        // fed in chunks of 7 bytes, the same frames
        ProtobufWatchFrames fed = new ProtobufWatchFrames();
        List<WatchEvent> fromChunks = new ArrayList<>();
        for (int i = 0; i < all.length; i += 7) {
            for (byte[] frame : fed.feed(java.nio.ByteBuffer.wrap(all, i, Math.min(7, all.length - i)))) {
                fromChunks.add(KubernetesProtobuf.decodeWatchEvent(frame));
            }
        }

        assertThat(fromJson).extracting(WatchEvent::getType).startsWith("ADDED", "MODIFIED").endsWith("DELETED");
        assertThat(fromProtobuf).extracting(WatchEvent::getType)
                .containsExactlyElementsOf(fromJson.stream().map(WatchEvent::getType).toList());
        for (int i = 0; i < fromJson.size(); i++) {
            assertThat(fromProtobuf.get(i).getObject()).isInstanceOf(Pod.class).isEqualTo(fromJson.get(i).getObject());
            // for an informer's cache: without managedFields, as Json.api()'s watch event decoding
            Pod forCache = (Pod) KubernetesProtobuf.decodeWatchEventForCache(framesOf(all).get(i)).getObject();
            assertThat(forCache).isEqualTo(forCacheFromJson.get(i).getObject());
            assertThat(((Pod) fromJson.get(i).getObject()).getMetadata().getManagedFields()).isNotEmpty();
            assertThat(fromChunks.get(i).getObject()).isEqualTo(fromJson.get(i).getObject());
        }
        assertThat(fromChunks).hasSameSizeAs(fromJson);
    }
}
