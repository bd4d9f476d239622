package io.qkcm.controller.namespace;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceCondition;
import io.fabric8.kubernetes.api.model.NamespaceStatus;

/**
 * Upstream's namespaceConditionUpdater (deletion/status_condition_utils.go): turns what went wrong
 * while deleting a namespace's content into its five deletion conditions, each set to its "ok"
 * variant (status False) when nothing went wrong, with upstream's reasons and messages.
 */
final class NamespaceConditionUpdater {

    static final String DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure";
    static final String GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure";
    static final String CONTENT_FAILURE = "NamespaceDeletionContentFailure";
    static final String CONTENT_REMAINING = "NamespaceContentRemaining";
    static final String FINALIZERS_REMAINING = "NamespaceFinalizersRemaining";

    /** The condition types this controller maintains, in upstream's order. */
    static final List<String> CONDITION_TYPES = List.of(DISCOVERY_FAILURE, GV_PARSING_FAILURE, CONTENT_FAILURE,
            CONTENT_REMAINING, FINALIZERS_REMAINING);

    private static final Map<String, String> OK_MESSAGES = Map.of(
            DISCOVERY_FAILURE, "All resources successfully discovered",
            GV_PARSING_FAILURE, "All legacy kube types successfully parsed",
            CONTENT_FAILURE, "All content successfully deleted, may be waiting on finalization",
            CONTENT_REMAINING, "All content successfully removed",
            FINALIZERS_REMAINING, "All content-preserving finalizers finished");

    private static final Map<String, String> OK_REASONS = Map.of(
            DISCOVERY_FAILURE, "ResourcesDiscovered",
            GV_PARSING_FAILURE, "ParsedGroupVersions",
            CONTENT_FAILURE, "ContentDeleted",
            CONTENT_REMAINING, "ContentRemoved",
            FINALIZERS_REMAINING, "ContentHasNoFinalizers");

    private final List<NamespaceCondition> newConditions = new ArrayList<>();
    private final List<String> deleteContentErrors = new ArrayList<>();

    void processGroupVersionErr(String message) {
        newConditions.add(condition(GV_PARSING_FAILURE, "True", "GroupVersionParsingFailed", message));
    }

    /** {@code failingGroups} is the number of failed groups for a partial failure, or -1 otherwise. */
    void processDiscoverResourcesErr(String message, int failingGroups) {
        String msg = failingGroups >= 0
                ? "Discovery failed for some groups, " + failingGroups + " failing: " + message
                : message;
        newConditions.add(condition(DISCOVERY_FAILURE, "True", "DiscoveryFailed", msg));
    }

    /** gvrToNumRemaining keys are "resource.group"; finalizersToNumRemaining keys are finalizer names. */
    void processContentTotals(Map<String, Integer> gvrToNumRemaining, Map<String, Integer> finalizersToNumRemaining) {
        if (!gvrToNumRemaining.isEmpty()) {
            List<String> remaining = new ArrayList<>();
            gvrToNumRemaining.forEach((resourceDotGroup, n) -> {
                if (n != 0) {
                    remaining.add(resourceDotGroup + " has " + n + " resource instances");
                }
            });
            Collections.sort(remaining);
            newConditions.add(condition(CONTENT_REMAINING, "True", "SomeResourcesRemain",
                    "Some resources are remaining: " + String.join(", ", remaining)));
        }
        if (!finalizersToNumRemaining.isEmpty()) {
            List<String> remaining = new ArrayList<>();
            finalizersToNumRemaining.forEach((finalizer, n) -> {
                if (n != 0) {
                    remaining.add(finalizer + " in " + n + " resource instances");
                }
            });
            Collections.sort(remaining);
            newConditions.add(condition(FINALIZERS_REMAINING, "True", "SomeFinalizersRemain",
                    "Some content in the namespace has finalizers remaining: " + String.join(", ", remaining)));
        }
    }

    void processDeleteContentErr(String message) {
        deleteContentErrors.add(message);
    }

    /** Applies the conditions to {@code ns}'s status; true if anything changed. */
    boolean update(Namespace ns) {
        if (find(newConditions, CONTENT_FAILURE) == null && !deleteContentErrors.isEmpty()) {
            List<String> msgs = new ArrayList<>(deleteContentErrors);
            Collections.sort(msgs);
            newConditions.add(condition(CONTENT_FAILURE, "True", "ContentDeletionFailed",
                    "Failed to delete all resource types, " + msgs.size() + " remaining: " + String.join(", ", msgs)));
        }
        if (ns.getStatus() == null) {
            ns.setStatus(new NamespaceStatus());
        }
        if (ns.getStatus().getConditions() == null) {
            ns.getStatus().setConditions(new ArrayList<>());
        } else {
            ns.getStatus().setConditions(new ArrayList<>(ns.getStatus().getConditions()));
        }
        List<NamespaceCondition> current = ns.getStatus().getConditions();
        boolean changed = false;
        for (String type : CONDITION_TYPES) {
            NamespaceCondition wanted = find(newConditions, type);
            if (wanted == null) {
                wanted = condition(type, "False", OK_REASONS.get(type), OK_MESSAGES.get(type));
            }
            NamespaceCondition old = find(current, type);
            if (old == null) {
                current.add(wanted);
                changed = true;
            } else if (!Objects.equals(old.getStatus(), wanted.getStatus())
                    || !Objects.equals(old.getMessage(), wanted.getMessage())
                    || !Objects.equals(old.getReason(), wanted.getReason())) {
                if (!Objects.equals(old.getStatus(), wanted.getStatus())) {
                    old.setLastTransitionTime(now());
                }
                old.setType(wanted.getType());
                old.setStatus(wanted.getStatus());
                old.setReason(wanted.getReason());
                old.setMessage(wanted.getMessage());
                changed = true;
            }
        }
        return changed;
    }

    private static NamespaceCondition find(List<NamespaceCondition> conditions, String type) {
        for (NamespaceCondition c : conditions) {
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    private static NamespaceCondition condition(String type, String status, String reason, String message) {
        NamespaceCondition c = new NamespaceCondition();
        c.setType(type);
        c.setStatus(status);
        c.setReason(reason);
        c.setMessage(message);
        c.setLastTransitionTime(now());
        return c;
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
