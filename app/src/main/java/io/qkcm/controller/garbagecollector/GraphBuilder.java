package io.qkcm.controller.garbagecollector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.ApiDiscovery.ApiResource;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataInformers;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.ObjectMetadata.OwnerRef;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * Upstream graph_builder.go: monitors over every deletable resource (a handler on the process's shared
 * informer where the type has one, else a metadata-only informer; see {@link Monitor}) funnel their
 * events into {@code graphChanges}; one thread applies them to the uid → node graph and feeds
 * {@code attemptToDelete} and {@code attemptToOrphan}.
 */
final class GraphBuilder {

    private static final Logger LOG = Logger.getLogger(GraphBuilder.class);

    static final String FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion";
    static final String FINALIZER_ORPHAN_DEPENDENTS = "orphan";

    /** Upstream DefaultIgnoredResources: core and events.k8s.io events (group/resource). */
    static final Set<String> IGNORED_RESOURCES = Set.of("/events", "events.k8s.io/events");

    enum EventType {
        ADD, UPDATE, DELETE
    }

    /** A graph change; identity equality, so two identical changes are both processed (upstream *event). */
    static final class Event {
        final boolean virtual;
        final EventType type;
        final ObjectMetadata obj;
        final ObjectMetadata oldObj;

        Event(boolean virtual, EventType type, ObjectMetadata obj, ObjectMetadata oldObj) {
            this.virtual = virtual;
            this.type = type;
            this.obj = obj;
            this.oldObj = oldObj;
        }
    }

    private final MetadataInformers informers;
    /** The process's shared informers; null where a test builds the garbage collector alone. */
    private final SharedInformers shared;
    private final EventRecorder recorder;
    final WorkQueue<Event> graphChanges;
    final WorkQueue<Node> attemptToDelete;
    final WorkQueue<Node> attemptToOrphan;
    final ReferenceCache absentOwnerCache;
    final Map<String, Node> uidToNode = new ConcurrentHashMap<>();

    private final Object monitorLock = new Object();
    private Map<GroupVersionResource, Monitor> monitors = new LinkedHashMap<>();
    private boolean running;

    GraphBuilder(MetadataInformers informers, SharedInformers shared, EventRecorder recorder,
            WorkQueue<Event> graphChanges, WorkQueue<Node> attemptToDelete, WorkQueue<Node> attemptToOrphan) {
        this.informers = informers;
        this.shared = shared;
        this.recorder = recorder;
        this.graphChanges = graphChanges;
        this.attemptToDelete = attemptToDelete;
        this.attemptToOrphan = attemptToOrphan;
        this.absentOwnerCache = new ReferenceCache(500);
    }

    static boolean ignored(GroupVersionResource gvr) {
        return IGNORED_RESOURCES.contains(gvr.group() + "/" + gvr.resource());
    }

    /**
     * Rebuilds the monitor set: keeps existing monitors, creates new ones, stops those no longer listed.
     * A metadata monitor whose type got a shared informer since (a controller asked for it after the
     * last sync) hands over to that informer, so no type stays watched twice. Returns how many monitors
     * were created or handed over (they are not started yet).
     */
    int syncMonitors(Map<GroupVersionResource, ApiResource> resources) {
        synchronized (monitorLock) {
            Map<GroupVersionResource, Monitor> toRemove = new HashMap<>(monitors);
            Map<GroupVersionResource, Monitor> current = new LinkedHashMap<>();
            int kept = 0;
            int added = 0;
            int handedOver = 0;
            for (Map.Entry<GroupVersionResource, ApiResource> e : resources.entrySet()) {
                GroupVersionResource gvr = e.getKey();
                if (ignored(gvr)) {
                    continue;
                }
                Monitor existing = toRemove.remove(gvr);
                if (existing instanceof Monitor.Metadata metadata) {
                    Optional<Class<? extends HasMetadata>> type = sharedType(gvr);
                    if (type.isPresent()) {
                        // stopped first: nothing of the metadata informer reaches the graph after the handover
                        metadata.stop();
                        current.put(gvr, sharedMonitor(type.get(), gvr, e.getValue().kind(), metadata.cached()));
                        handedOver++;
                        continue;
                    }
                }
                if (existing != null) {
                    current.put(gvr, existing);
                    kept++;
                    continue;
                }
                current.put(gvr, monitorFor(gvr, e.getValue().kind()));
                added++;
            }
            monitors = current;
            toRemove.values().forEach(Monitor::stop);
            LOG.debugf("synced monitors: added %d, kept %d, handed over to shared informers %d, removed %d", added, kept,
                    handedOver, toRemove.size());
            return added + handedOver;
        }
    }

    private Optional<Class<? extends HasMetadata>> sharedType(GroupVersionResource gvr) {
        return shared == null ? Optional.empty() : shared.typeServing(gvr);
    }

    /** Upstream's informerfactory: the shared typed informer where the process has one, else a metadata informer. */
    private Monitor monitorFor(GroupVersionResource gvr, String kind) {
        Optional<Class<? extends HasMetadata>> type = sharedType(gvr);
        if (type.isPresent()) {
            return sharedMonitor(type.get(), gvr, kind, null);
        }
        return new Monitor.Metadata(informers.informerFor(gvr, kind), graphChanges::add);
    }

    private <T extends HasMetadata> Monitor sharedMonitor(Class<T> type, GroupVersionResource gvr, String kind,
            java.util.Collection<ObjectMetadata> previous) {
        return new Monitor.Shared<>(shared, type, gvr, kind, graphChanges::add, previous);
    }

    /** Starts monitors not yet started; before {@link #run} it does nothing. */
    void startMonitors() {
        synchronized (monitorLock) {
            if (!running) {
                return;
            }
            int started = 0;
            for (Monitor m : monitors.values()) {
                if (!m.started()) {
                    m.start();
                    started++;
                }
            }
            LOG.debugf("started new monitors: new %d, current %d", started, monitors.size());
        }
    }

    boolean isResourceSynced(GroupVersionResource gvr) {
        synchronized (monitorLock) {
            Monitor m = monitors.get(gvr);
            return m != null && m.hasSynced();
        }
    }

    /** True if there are monitors and every one has synced. */
    boolean isSynced() {
        synchronized (monitorLock) {
            if (monitors.isEmpty()) {
                return false;
            }
            for (Map.Entry<GroupVersionResource, Monitor> e : monitors.entrySet()) {
                if (!e.getValue().hasSynced()) {
                    LOG.tracef("garbage controller monitor not yet synced: %s", e.getKey());
                    return false;
                }
            }
            return true;
        }
    }

    /** The monitor of a resource, for cache reads (upstream getMetadata). */
    Monitor monitor(GroupVersionResource gvr) {
        synchronized (monitorLock) {
            return monitors.get(gvr);
        }
    }

    int monitorCount() {
        synchronized (monitorLock) {
            return monitors.size();
        }
    }

    List<Monitor> monitorList() {
        synchronized (monitorLock) {
            return new ArrayList<>(monitors.values());
        }
    }

    /** Marks the builder running, starts monitors and processes graph changes until the queue shuts down. */
    void run() {
        synchronized (monitorLock) {
            running = true;
        }
        startMonitors();
        try {
            while (processGraphChanges()) {
                // until shutdown
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stopMonitors();
        }
    }

    /** Stops every monitor: each loses the handler; a metadata informer no other user holds ends, the shared ones run on. */
    void stopMonitors() {
        synchronized (monitorLock) {
            monitors.values().forEach(Monitor::stop);
            LOG.infof("stopped %d monitors", monitors.size());
            monitors = new LinkedHashMap<>();
            running = false;
        }
    }

    void enqueueVirtualDeleteEvent(ObjectRef ref) {
        ObjectMetadata obj = new ObjectMetadata(ref.apiVersion(), ref.kind(), ref.namespace(), ref.name(), ref.uid(),
                null, null, null, null);
        graphChanges.add(new Event(true, EventType.DELETE, obj, null));
    }

    /**
     * Adds {@code n} to its owners' dependents, creating virtual nodes (queued to attemptToDelete for a
     * live check) for owners not in the graph; queues {@code n} when a reference looks invalid.
     */
    private void addDependentToOwners(Node n, List<OwnerRef> owners) {
        boolean hasPotentiallyInvalidOwnerReference = false;
        for (OwnerRef owner : owners) {
            Node ownerNode = uidToNode.get(owner.uid());
            boolean ok = ownerNode != null;
            if (!ok) {
                ownerNode = new Node(ObjectRef.of(owner, n.identity.namespace()), List.of(), true, false, false);
                LOG.tracef("add virtual item %s", ownerNode.identity);
                uidToNode.put(owner.uid(), ownerNode);
            }
            ownerNode.addDependent(n);
            if (!ok) {
                attemptToDelete.add(ownerNode);
            } else if (!hasPotentiallyInvalidOwnerReference) {
                boolean ownerIsNamespaced = !ownerNode.identity.namespace().isEmpty();
                if (ownerIsNamespaced && !ownerNode.identity.namespace().equals(n.identity.namespace())) {
                    if (ownerNode.isObserved()) {
                        LOG.debugf("item %s references an owner %s but does not match namespaces", n.identity,
                                ownerNode.identity);
                        reportInvalidNamespaceOwnerRef(n, owner.uid());
                    }
                    hasPotentiallyInvalidOwnerReference = true;
                } else if (!ownerNode.identity.matchesCoordinates(owner)) {
                    if (ownerNode.isObserved()) {
                        LOG.debugf("item %s references an owner %s with coordinates that do not match the observed identity",
                                n.identity, ownerNode.identity);
                    }
                    hasPotentiallyInvalidOwnerReference = true;
                } else if (!ownerIsNamespaced && !ownerNode.identity.namespace().equals(n.identity.namespace())
                        && !ownerNode.isObserved()) {
                    // a virtual cluster-scoped owner referenced from another namespace could be a missing
                    // namespaced owner wrongly referenced by a cluster-scoped dependent (upstream #98040)
                    hasPotentiallyInvalidOwnerReference = true;
                }
            }
        }
        if (hasPotentiallyInvalidOwnerReference) {
            attemptToDelete.add(n);
        }
    }

    private void reportInvalidNamespaceOwnerRef(Node n, String invalidOwnerUid) {
        OwnerRef invalid = null;
        for (OwnerRef ref : n.owners) {
            if (ref.uid().equals(invalidOwnerUid)) {
                invalid = ref;
                break;
            }
        }
        if (invalid == null) {
            return;
        }
        GenericKubernetesResource involved = new GenericKubernetesResource();
        involved.setApiVersion(n.identity.apiVersion());
        involved.setKind(n.identity.kind());
        involved.setMetadata(new ObjectMetaBuilder().withNamespace(n.identity.namespace()).withName(n.identity.name())
                .withUid(n.identity.uid()).build());
        ObjectRef invalidIdentity = ObjectRef.of(invalid, n.identity.namespace());
        recorder.eventf(involved, EventRecorder.WARNING, "OwnerRefInvalidNamespace",
                "ownerRef %s does not exist in namespace %s", invalidIdentity, goQuote(n.identity.namespace()));
    }

    private static String goQuote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private void insertNode(Node n) {
        uidToNode.put(n.identity.uid(), n);
        addDependentToOwners(n, n.owners);
    }

    private void removeDependentFromOwners(Node n, List<OwnerRef> owners) {
        for (OwnerRef owner : owners) {
            Node ownerNode = uidToNode.get(owner.uid());
            if (ownerNode != null) {
                ownerNode.deleteDependent(n);
            }
        }
    }

    private void removeNode(Node n) {
        uidToNode.remove(n.identity.uid());
        removeDependentFromOwners(n, n.owners);
    }

    record Diff(List<OwnerRef> added, List<OwnerRef> removed, List<OwnerRef[]> changed) {
        boolean empty() {
            return added.isEmpty() && removed.isEmpty() && changed.isEmpty();
        }
    }

    static Diff referencesDiffs(List<OwnerRef> old, List<OwnerRef> current) {
        Map<String, OwnerRef> oldByUid = new LinkedHashMap<>();
        for (OwnerRef r : old) {
            oldByUid.put(r.uid(), r);
        }
        Set<String> oldUids = new HashSet<>(oldByUid.keySet());
        List<OwnerRef> added = new ArrayList<>();
        List<OwnerRef[]> changed = new ArrayList<>();
        for (OwnerRef r : current) {
            if (oldUids.contains(r.uid())) {
                if (!oldByUid.get(r.uid()).equals(r)) {
                    changed.add(new OwnerRef[] { oldByUid.get(r.uid()), r });
                }
                oldUids.remove(r.uid());
            } else {
                added.add(r);
            }
        }
        List<OwnerRef> removed = new ArrayList<>();
        for (String uid : oldUids) {
            removed.add(oldByUid.get(uid));
        }
        return new Diff(added, removed, changed);
    }

    private static boolean deletionStartsWithFinalizer(ObjectMetadata oldObj, ObjectMetadata newObj, String finalizer) {
        if (!newObj.beingDeleted() || !newObj.hasFinalizer(finalizer)) {
            return false;
        }
        if (oldObj == null) {
            return true;
        }
        return !oldObj.beingDeleted() || !oldObj.hasFinalizer(finalizer);
    }

    /** Queues owners whose blocking reference from this dependent was removed or unblocked. */
    private void addUnblockedOwnersToDeleteQueue(List<OwnerRef> removed, List<OwnerRef[]> changed) {
        for (OwnerRef ref : removed) {
            if (ref.blocksOwnerDeletion()) {
                Node node = uidToNode.get(ref.uid());
                if (node == null) {
                    LOG.tracef("cannot find uid %s in uidToNode", ref.uid());
                    continue;
                }
                attemptToDelete.add(node);
            }
        }
        for (OwnerRef[] c : changed) {
            boolean wasBlocked = c[0].blocksOwnerDeletion();
            boolean isUnblocked = !c[1].blocksOwnerDeletion();
            if (wasBlocked && isUnblocked) {
                Node node = uidToNode.get(c[1].uid());
                if (node == null) {
                    LOG.tracef("cannot find uid %s in uidToNode", c[1].uid());
                    continue;
                }
                attemptToDelete.add(node);
            }
        }
    }

    private void processTransitions(ObjectMetadata oldObj, ObjectMetadata newObj, Node n) {
        if (deletionStartsWithFinalizer(oldObj, newObj, FINALIZER_ORPHAN_DEPENDENTS)) {
            LOG.tracef("add item %s to attemptToOrphan", n.identity);
            attemptToOrphan.add(n);
            return;
        }
        if (deletionStartsWithFinalizer(oldObj, newObj, FINALIZER_DELETE_DEPENDENTS)) {
            LOG.debugf("add item %s to attemptToDelete, because it's waiting for its dependents to be deleted", n.identity);
            n.markDeletingDependents();
            for (Node dep : n.getDependents()) {
                attemptToDelete.add(dep);
            }
            attemptToDelete.add(n);
        }
    }

    private static ObjectRef identityFromEvent(Event event) {
        return ObjectRef.of(event.obj);
    }

    /** Takes one graph change and applies it; false once the queue is shut down. */
    boolean processGraphChanges() throws InterruptedException {
        Event event = graphChanges.get();
        if (event == null) {
            return false;
        }
        try {
            processEvent(event);
        } catch (RuntimeException e) {
            LOG.errorf(e, "garbage collector: cannot process graph change for %s", event.obj);
        } finally {
            graphChanges.done(event);
        }
        return true;
    }

    void processEvent(Event event) {
        ObjectMetadata obj = event.obj;
        LOG.tracef("GraphBuilder process object %s, event %s, virtual %s", obj, event.type, event.virtual);
        Node existingNode = uidToNode.get(obj.uid());
        boolean found = existingNode != null;
        if (found && !event.virtual && !existingNode.isObserved()) {
            ObjectRef observedIdentity = identityFromEvent(event);
            if (!observedIdentity.equals(existingNode.identity)) {
                List<Node> potentiallyInvalidDependents = partitionDependents(existingNode.getDependents(),
                        observedIdentity)[1];
                for (Node dep : potentiallyInvalidDependents) {
                    if (!observedIdentity.namespace().isEmpty()
                            && !dep.identity.namespace().equals(observedIdentity.namespace())) {
                        LOG.debugf("item %s references an owner %s but does not match namespaces", dep.identity,
                                observedIdentity);
                        reportInvalidNamespaceOwnerRef(dep, observedIdentity.uid());
                    }
                    attemptToDelete.add(dep);
                }
                LOG.debugf("replacing virtual item %s with observed item %s", existingNode.identity, observedIdentity);
                existingNode = existingNode.cloneWithIdentity(observedIdentity);
                uidToNode.put(observedIdentity.uid(), existingNode);
            }
            existingNode.markObserved();
        }
        switch (event.type) {
            case ADD, UPDATE -> {
                if (!found) {
                    boolean beingDeleted = obj.beingDeleted();
                    Node newNode = new Node(identityFromEvent(event), obj.ownerReferences(), false, beingDeleted,
                            beingDeleted && obj.hasFinalizer(FINALIZER_DELETE_DEPENDENTS));
                    insertNode(newNode);
                    processTransitions(event.oldObj, obj, newNode);
                } else {
                    Diff diff = referencesDiffs(existingNode.owners, obj.ownerReferences());
                    if (!diff.empty()) {
                        addUnblockedOwnersToDeleteQueue(diff.removed(), diff.changed());
                        existingNode.owners = obj.ownerReferences();
                        addDependentToOwners(existingNode, diff.added());
                        removeDependentFromOwners(existingNode, diff.removed());
                    }
                    if (obj.beingDeleted()) {
                        existingNode.markBeingDeleted();
                    }
                    processTransitions(event.oldObj, obj, existingNode);
                }
            }
            case DELETE -> processDelete(event, existingNode);
        }
    }

    private void processDelete(Event event, Node existingNode) {
        if (existingNode == null) {
            LOG.tracef("item %s doesn't exist in the graph, this shouldn't happen", event.obj.uid());
            return;
        }
        boolean removeExistingNode = true;
        if (event.virtual) {
            ObjectRef deletedIdentity = identityFromEvent(event);
            if (existingNode.isVirtual()) {
                List<Node>[] parts = partitionDependents(existingNode.getDependents(), deletedIdentity);
                List<Node> matching = parts[0];
                List<Node> nonmatching = parts[1];
                if (!nonmatching.isEmpty()) {
                    // some dependents disagree on this owner's coordinates: keep the virtual node
                    removeExistingNode = false;
                    if (!matching.isEmpty()) {
                        absentOwnerCache.add(deletedIdentity);
                        matching.forEach(attemptToDelete::add);
                    }
                    if (existingNode.identity.equals(deletedIdentity)) {
                        ObjectRef replacement = getAlternateOwnerIdentity(nonmatching, deletedIdentity);
                        if (replacement != null) {
                            Node replacementNode = existingNode.cloneWithIdentity(replacement);
                            uidToNode.put(replacement.uid(), replacementNode);
                            attemptToDelete.addRateLimited(replacementNode);
                        }
                    }
                }
            } else if (!existingNode.identity.equals(deletedIdentity)) {
                // never remove an observed node on a virtual delete with other coordinates
                removeExistingNode = false;
                List<Node> matching = partitionDependents(existingNode.getDependents(), deletedIdentity)[0];
                if (!matching.isEmpty()) {
                    absentOwnerCache.add(deletedIdentity);
                    matching.forEach(attemptToDelete::add);
                }
            }
        }
        if (removeExistingNode) {
            removeNode(existingNode);
            List<Node> dependents = existingNode.getDependents();
            if (!dependents.isEmpty()) {
                absentOwnerCache.add(identityFromEvent(event));
            }
            dependents.forEach(attemptToDelete::add);
            for (OwnerRef owner : existingNode.owners) {
                Node ownerNode = uidToNode.get(owner.uid());
                if (ownerNode == null || !ownerNode.isDeletingDependents()) {
                    continue;
                }
                // lets the owner check whether all its blocking dependents are gone
                attemptToDelete.add(ownerNode);
            }
        }
    }

    /**
     * Splits dependents into those whose reference to {@code owner.uid} matches all of owner's
     * coordinates, and those with a reference to that uid that does not (both lists may hold a node).
     */
    @SuppressWarnings("unchecked")
    static List<Node>[] partitionDependents(List<Node> dependents, ObjectRef owner) {
        List<Node> matching = new ArrayList<>();
        List<Node> nonmatching = new ArrayList<>();
        boolean ownerIsNamespaced = !owner.namespace().isEmpty();
        for (Node dep : dependents) {
            boolean foundMatch = false;
            boolean foundMismatch = false;
            if (ownerIsNamespaced && !owner.namespace().equals(dep.identity.namespace())) {
                foundMismatch = true;
            } else {
                for (OwnerRef ref : dep.owners) {
                    if (ref.uid().equals(owner.uid())) {
                        if (owner.matchesCoordinates(ref)) {
                            foundMatch = true;
                        } else {
                            foundMismatch = true;
                        }
                    }
                }
            }
            if (foundMatch) {
                matching.add(dep);
            }
            if (foundMismatch) {
                nonmatching.add(dep);
            }
        }
        return new List[] { matching, nonmatching };
    }

    static boolean referenceLessThan(ObjectRef a, ObjectRef b) {
        if (!a.kind().equals(b.kind())) {
            return a.kind().compareTo(b.kind()) < 0;
        }
        if (!a.apiVersion().equals(b.apiVersion())) {
            return a.apiVersion().compareTo(b.apiVersion()) < 0;
        }
        if (!a.namespace().equals(b.namespace())) {
            return a.namespace().compareTo(b.namespace()) < 0;
        }
        if (!a.name().equals(b.name())) {
            return a.name().compareTo(b.name()) < 0;
        }
        return a.uid().compareTo(b.uid()) < 0;
    }

    /**
     * Another identity dependents use for the absent owner's uid: the first following the absent one
     * (by {@link #referenceLessThan}), else the first; null if none.
     */
    static ObjectRef getAlternateOwnerIdentity(List<Node> deps, ObjectRef verifiedAbsent) {
        boolean absentIsClusterScoped = verifiedAbsent.namespace().isEmpty();
        Set<ObjectRef> seen = new HashSet<>();
        seen.add(verifiedAbsent);
        ObjectRef first = null;
        ObjectRef firstFollowing = null;
        for (Node dep : deps) {
            for (OwnerRef ownerRef : dep.owners) {
                if (!ownerRef.uid().equals(verifiedAbsent.uid())) {
                    continue;
                }
                if (verifiedAbsent.matchesCoordinates(ownerRef)
                        && (absentIsClusterScoped || verifiedAbsent.namespace().equals(dep.identity.namespace()))) {
                    continue;
                }
                ObjectRef ref = ObjectRef.of(ownerRef, dep.identity.namespace());
                if (absentIsClusterScoped && ref.apiVersion().equals(verifiedAbsent.apiVersion())
                        && ref.kind().equals(verifiedAbsent.kind())) {
                    ref = ref.withNamespace("");
                }
                if (!seen.add(ref)) {
                    continue;
                }
                if (first == null || referenceLessThan(ref, first)) {
                    first = ref;
                }
                if (referenceLessThan(verifiedAbsent, ref) && (firstFollowing == null || referenceLessThan(ref, firstFollowing))) {
                    firstFollowing = ref;
                }
            }
        }
        return firstFollowing != null ? firstFollowing : first;
    }

    static boolean sameOwners(List<OwnerRef> a, List<OwnerRef> b) {
        return Objects.equals(a, b);
    }
}
