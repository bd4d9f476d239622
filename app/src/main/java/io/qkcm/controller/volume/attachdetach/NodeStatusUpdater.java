package io.qkcm.controller.volume.attachdetach;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.fabric8.kubernetes.api.model.AttachedVolume;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;

/**
 * Upstream's statusupdater.NodeStatusUpdater: writes each node's status.volumesAttached from the actual
 * state of the world (component-helpers' PatchNodeStatus: a strategic merge patch of the status
 * subresource; the list is atomic, so the patch carries it whole). A failed write marks the node for
 * another try.
 */
final class NodeStatusUpdater {

    private static final Logger LOG = Logger.getLogger(NodeStatusUpdater.class);

    private final KubernetesClient client;
    private final Function<String, Node> nodes;
    private final ActualStateOfWorld asw;

    NodeStatusUpdater(KubernetesClient client, Function<String, Node> nodes, ActualStateOfWorld asw) {
        this.client = client;
        this.nodes = nodes;
        this.asw = asw;
    }

    /** UpdateNodeStatuses: false when some node could not be written. */
    boolean updateNodeStatuses() {
        int nodeIssues = 0;
        for (Map.Entry<String, List<AttachedVolume>> e : asw.getVolumesToReportAttached().entrySet()) {
            if (!processNodeVolumes(e.getKey(), e.getValue())) {
                nodeIssues++;
            }
        }
        if (nodeIssues > 0) {
            LOG.debugf("UpdateNodeStatuses failed: unable to update %d nodes", nodeIssues);
        }
        return nodeIssues == 0;
    }

    /** UpdateNodeStatusForNode: false when the write failed. */
    boolean updateNodeStatusForNode(String nodeName) {
        List<AttachedVolume> attached = asw.getVolumesToReportAttachedForNode(nodeName);
        return attached == null || processNodeVolumes(nodeName, attached);
    }

    private boolean processNodeVolumes(String nodeName, List<AttachedVolume> attached) {
        Node node = nodes.apply(nodeName);
        if (node == null) {
            LOG.debugf("Could not update node status. Failed to find node %s in NodeInformer cache", nodeName);
            return true;
        }
        try {
            String patch = patch(node, attached);
            client.nodes().withName(nodeName).subresource("status").patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
            LOG.debugf("Updating status for node %s succeeded: %s", nodeName, patch);
            return true;
        } catch (RuntimeException e) {
            if (ApiErrors.isNotFound(e)) {
                LOG.debugf("Could not update node status, node %s does not exist - skipping", nodeName);
                return true;
            }
            asw.setNodeStatusUpdateNeeded(nodeName);
            LOG.debugf("Could not update node status for %s; re-marking for update: %s", nodeName, ApiErrors.message(e));
            return false;
        }
    }

    /** The two-way merge patch from the cached node to it with {@code attached}: {} when they are equal. */
    static String patch(Node node, List<AttachedVolume> attached) {
        List<AttachedVolume> old = node.getStatus() == null || node.getStatus().getVolumesAttached() == null ? List.of()
                : node.getStatus().getVolumesAttached();
        if (same(old, attached)) {
            return "{}";
        }
        Object value = null;
        if (!attached.isEmpty()) {
            List<Map<String, String>> list = new ArrayList<>();
            for (AttachedVolume v : attached) {
                Map<String, String> m = new LinkedHashMap<>();
                m.put("name", v.getName());
                m.put("devicePath", v.getDevicePath() == null ? "" : v.getDevicePath());
                list.add(m);
            }
            value = list;
        }
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("volumesAttached", value);
        try {
            return Json.mapper().writeValueAsString(Map.of("status", status));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean same(List<AttachedVolume> a, List<AttachedVolume> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Objects.equals(a.get(i).getName(), b.get(i).getName())
                    || !Objects.equals(Objects.toString(a.get(i).getDevicePath(), ""), Objects.toString(b.get(i).getDevicePath(), ""))) {
                return false;
            }
        }
        return true;
    }
}
