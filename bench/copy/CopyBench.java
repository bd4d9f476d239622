import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import io.fabric8.kubernetes.api.model.Node;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.Json;

/**
 * One kwok Node (the conditions, addresses, capacity and node info kwok posts) copied 20,000 times through
 * the API serialization and 20,000 times by its builder, six rounds, alternating; the first round includes
 * the JIT's warm-up. Prints the thread's CPU time per copy (a busy machine moves it less than wall time) as a
 * Markdown table.
 */
public class CopyBench {
    public static void main(String[] args) {
        StringBuilder conditions = new StringBuilder();
        for (String type : new String[] {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}) {
            conditions.append(conditions.length() == 0 ? "" : ",").append("""
                    {"type":"%s","status":"False","reason":"R","message":"kubelet is posting ready status",
                     "lastHeartbeatTime":"2026-11-26T00:00:00Z","lastTransitionTime":"2026-11-26T00:00:00Z"}"""
                    .formatted(type));
        }
        Node node = Json.api().unmarshal("""
                {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-000001",
                 "uid":"0b6f2a1e-1111-2222-3333-444455556666","resourceVersion":"1234",
                 "labels":{"kubernetes.io/hostname":"node-000001","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",
                  "type":"kwok"},"annotations":{"node.alpha.kubernetes.io/ttl":"0","kwok.x-k8s.io/node":"fake"},
                 "creationTimestamp":"2026-11-26T00:00:00Z"},
                 "spec":{"podCIDR":"10.0.1.0/24","podCIDRs":["10.0.1.0/24"]},
                 "status":{"capacity":{"cpu":"32","memory":"256Gi","pods":"110"},
                  "allocatable":{"cpu":"32","memory":"256Gi","pods":"110"},"conditions":[%s],
                  "addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                  "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
                  "nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"",
                   "containerRuntimeVersion":"","kubeletVersion":"fake","kubeProxyVersion":"fake",
                   "operatingSystem":"linux","architecture":"amd64"},"phase":"Running"}}""".formatted(conditions),
                Node.class);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        int n = 20_000;
        long sink = 0;
        System.out.println("| round | JSON round trip (µs CPU/copy) | builder (µs CPU/copy) | builder/JSON |");
        System.out.println("|---|---|---|---|");
        for (int round = 0; round < 6; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += Json.api().clone(node).getMetadata().getName().length();
            }
            long t1 = cpu.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink += DeepCopy.of(node).getMetadata().getName().length();
            }
            long t2 = cpu.getCurrentThreadCpuTime();
            double json = (t1 - t0) / (n * 1e3);
            double builder = (t2 - t1) / (n * 1e3);
            System.out.printf("| %d | %.1f | %.1f | %.2f |%n", round, json, builder, builder / json);
        }
        if (sink == 42) {
            System.out.println(); // keeps the copies from being optimized away
        }
    }
}
