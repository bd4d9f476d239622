package io.qkcm.runtime.shadow;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.shadow.ShadowAction.Side;

/**
 * Pairs qkcm's intended writes with upstream's observed ones. Actions with the same {@link ShadowAction#key}
 * form a group, which closes once no action joined it for the window (so a burst of status updates on
 * either side is one group, and the sides' different batching does not count). A closed group is
 * classified:
 * <ul>
 * <li>creates: as many pairs as the smaller side has; each pair {@code matched} or {@code different-content},
 * the surplus {@code only-qkcm} / {@code only-upstream} (one pod too many is one {@code only-qkcm});</li>
 * <li>updates and events: one action per group, matched when both sides wrote (contents of the last accepted
 * write of each compared), else {@code only-qkcm} / {@code only-upstream};</li>
 * <li>deletes: a delete carries no field manager, so upstream's cannot be told from anyone else's: a qkcm
 * delete is {@code matched} when the object was seen deleted (or given a deletionTimestamp) in the window,
 * else {@code only-qkcm}; deletions qkcm did not intend are not counted;</li>
 * <li>a qkcm dry run refused for another reason than NotFound or Conflict (invalid, forbidden, ...) is
 * {@code rejected}: upstream's validation would have refused the write.</li>
 * </ul>
 * Each class is counted in {@code qkcm_shadow_actions_total{controller,class}}; every class but
 * {@code matched} is logged and kept among the latest mismatches for the report.
 */
public final class ShadowMatcher implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ShadowMatcher.class);

    public static final String MATCHED = "matched";
    public static final String ONLY_QKCM = "only-qkcm";
    public static final String ONLY_UPSTREAM = "only-upstream";
    public static final String DIFFERENT_CONTENT = "different-content";
    public static final String REJECTED = "rejected";
    /** Upstream wrote first and qkcm's controller, syncing afterwards with that write in its cache, wrote nothing. */
    public static final String CONVERGED = "converged";
    /**
     * A write into a namespace being deleted, refused by the API server (403, cause NamespaceTerminating): upstream's
     * controllers make the same attempts while the namespace controller empties it, and drop that error.
     */
    public static final String NAMESPACE_TERMINATING = "namespace-terminating";
    public static final List<String> CLASSES = List.of(MATCHED, CONVERGED, ONLY_QKCM, ONLY_UPSTREAM, DIFFERENT_CONTENT, REJECTED,
            NAMESPACE_TERMINATING);

    /** Whether a class is a difference between the two sides (what the report lists and logs). */
    public static boolean isMismatch(String cls) {
        return !cls.equals(MATCHED) && !cls.equals(CONVERGED) && !cls.equals(NAMESPACE_TERMINATING);
    }
    private static final String ANY_KIND = "*";

    /**
     * The "controller" of a creation seen with no managedFields at all (no field set but its identity, so the API
     * server kept no entry): anyone's. It only confirms a creation qkcm intended; alone it is not counted.
     */
    public static final String NO_MANAGER = "no-manager";

    /** Controller of an upstream write no qkcm controller wrote the like of. */
    public static final String UNATTRIBUTED = "unattributed";

    private static final int LATEST = 200;
    /** apimachinery's AlreadyExists message: {@code <resource> "<name>" already exists}. */
    private static final java.util.regex.Pattern ALREADY_EXISTS = java.util.regex.Pattern
            .compile("[a-z0-9.]+ \"[^\"]+\" already exists");

    /** A closed group that was not matched: what the report lists. */
    public record Mismatch(Instant time, String controller, String cls, String key, int qkcmActions,
            int upstreamActions, List<String> diff) {
    }

    private final Duration window;
    private final Clock clock;
    private final MeterRegistry registry;
    private final Map<String, Group> open = new LinkedHashMap<>();
    /** Which controller wrote a resource last: names the controller of an upstream write left alone. */
    private final ConcurrentMap<String, String> writers = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, AtomicLong> totals = new ConcurrentHashMap<>();
    private final Deque<Mismatch> latest = new ArrayDeque<>();
    private final AtomicLong intended = new AtomicLong();
    private final ScheduledExecutorService sweeper;
    /** "Kind namespace/name" → when qkcm's last syncs of it started (epoch millis). */
    private final ConcurrentMap<String, Deque<Long>> syncs = new ConcurrentHashMap<>();
    /** Controller → when dry runs of its were answered 409 (Conflict or AlreadyExists) lately: upstream had written first. */
    private final ConcurrentMap<String, Deque<Instant>> conflicts = new ConcurrentHashMap<>();
    /** "Kind namespace/name" → per controller and kind, how to queue the key of its last sync again. */
    private final ConcurrentMap<String, Map<String, Runnable>> resyncs = new ConcurrentHashMap<>();
    /** Leader election's Leases ("Lease namespace/name"), see {@link #leaderElectionLease}. */
    private final java.util.Set<String> own = ConcurrentHashMap.newKeySet();
    /** Namespaces seen deleted (or given a deletionTimestamp) lately. */
    private final ConcurrentMap<String, Instant> deletedNamespaces = new ConcurrentHashMap<>();
    /**
     * Upstream's events that predate shadow mode (key → the event), for qkcm's start: what upstream's controllers
     * said once at their own start (RegisteredNode), which qkcm's say at theirs. Bounded.
     */
    private final Map<String, ShadowAction> priorEvents = Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ShadowAction> eldest) {
            return size() > MAX_PRIOR_EVENTS;
        }
    });
    private static final int MAX_PRIOR_EVENTS = 10_000;
    /** What keeps groups open while qkcm starts ({@link #holdWhileStarting}); never true by default. */
    private volatile java.util.function.BooleanSupplier starting = () -> false;
    /** Groups close not before this: MAX while starting, then one window after; MIN once no longer held. */
    private volatile Instant holdUntil = Instant.MIN;
    /** The latest a start can hold groups (a standby replica whose controllers never start). */
    private volatile Instant holdCap = Instant.MAX;
    /** When qkcm's start ended (the hold's end): its actions before are its start's. MAX while starting, MIN if none was held. */
    private volatile Instant startEnded = Instant.MIN;

    public ShadowMatcher(Duration window, MeterRegistry registry) {
        this(window, registry, Clock.systemUTC(), true);
    }

    /** With {@code sweep} false, groups close only when {@link #closeDue} is called (tests). */
    public ShadowMatcher(Duration window, MeterRegistry registry, Clock clock, boolean sweep) {
        this.window = window;
        this.registry = registry;
        this.clock = clock;
        if (sweep) {
            sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "shadow-matcher");
                t.setDaemon(true);
                return t;
            });
            long period = Math.max(100, Math.min(1000, window.toMillis() / 4));
            sweeper.scheduleWithFixedDelay(() -> {
                try {
                    closeDue();
                } catch (RuntimeException e) {
                    LOG.warnf("shadow matcher: %s", e);
                }
            }, period, period, TimeUnit.MILLISECONDS);
        } else {
            sweeper = null;
        }
    }

    public Duration window() {
        return window;
    }

    public Instant now() {
        return clock.instant();
    }

    /**
     * A Lease of leader election's, shadow mode's own or upstream's: each side writes only its own by design, so
     * neither side's writes of it nor events about it (LeaderElection) are compared.
     */
    public void leaderElectionLease(String namespace, String name) {
        own.add(objectKey("Lease", namespace, name));
    }

    private boolean aboutOwn(ShadowAction action) {
        if (own.isEmpty()) {
            return false;
        }
        if (action.verb().equals("event")) {
            return action.object() != null && action.object().get("involvedObject") instanceof Map<?, ?> about
                    && own.contains(objectKey(about.get("kind"), about.get("namespace"), about.get("name")));
        }
        return action.resource().equals("coordination.k8s.io/leases")
                && own.contains(objectKey("Lease", action.namespace(), action.name()));
    }

    /** Takes one action of either side. */
    public void submit(ShadowAction action) {
        if (aboutOwn(action)) {
            return;
        }
        if (action.side() == Side.UPSTREAM && action.verb().equals("delete") && action.resource().equals("/namespaces")) {
            deletedNamespaces.put(action.name(), action.time());
        }
        if (action.side() == Side.QKCM) {
            intended.incrementAndGet();
            if (action.code() == 409) {
                Deque<Instant> times = conflicts.computeIfAbsent(action.controller(), k -> new ArrayDeque<>());
                synchronized (times) {
                    times.addLast(action.time());
                    while (times.size() > 32) {
                        times.removeFirst();
                    }
                }
            }
            writers.put(action.verb() + " " + action.resource(), action.controller());
        }
        synchronized (open) {
            Group g = open.computeIfAbsent(action.key(), Group::new);
            (action.side() == Side.QKCM ? g.qkcm : g.upstream).add(action);
            g.last = clock.instant();
        }
    }

    /**
     * Keeps every group open while {@code starting} (qkcm's controllers not all started, or its informers not
     * synced) and for one window after: what each side does once at its start (RegisteredNode events, the nodes'
     * taints, the aggregated ClusterRoles, ...) comes from upstream as soon as it runs and from qkcm's controllers
     * only once they have started, seconds apart on a slow start. At most {@link #MAX_START} (or ten windows).
     */
    public void holdWhileStarting(java.util.function.BooleanSupplier starting) {
        Duration cap = window.multipliedBy(10).compareTo(MAX_START) > 0 ? window.multipliedBy(10) : MAX_START;
        holdCap = clock.instant().plus(cap);
        this.starting = starting;
        startEnded = Instant.MAX;
        holdUntil = Instant.MAX;
    }

    static final Duration MAX_START = Duration.ofMinutes(5);

    /** Whether groups stay open for qkcm's start now. */
    private boolean held() {
        Instant until = holdUntil;
        if (until.equals(Instant.MIN)) {
            return false;
        }
        Instant now = clock.instant();
        if (until.equals(Instant.MAX)) {
            if (starting.getAsBoolean() && now.isBefore(holdCap)) {
                return true;
            }
            startEnded = now;
            until = now.plus(window);
            holdUntil = until;
        }
        if (now.isBefore(until)) {
            return true;
        }
        holdUntil = Instant.MIN;
        return false;
    }

    /**
     * An event of upstream's from before shadow mode started (the informers' first list): compared with what
     * qkcm's controllers say at their start only.
     */
    public void priorEvent(ShadowAction event) {
        priorEvents.put(event.key(), event);
    }

    /** Closes and classifies every group no action joined for the window. */
    public void closeDue() {
        if (held()) {
            return;
        }
        close(clock.instant().minus(window));
        long old = clock.millis() - 10 * Math.max(window.toMillis(), 1000);
        deletedNamespaces.values().removeIf(t -> t.toEpochMilli() < old);
        conflicts.values().removeIf(d -> {
            synchronized (d) {
                return d.isEmpty() || d.peekLast().toEpochMilli() < old;
            }
        });
        syncs.values().removeIf(d -> {
            synchronized (d) {
                return d.isEmpty() || d.peekLast() < old;
            }
        });
        resyncs.keySet().retainAll(syncs.keySet());
    }

    /** Closes and classifies every open group now (the end of a test, or of the process). */
    public void closeAll() {
        close(Instant.MAX);
    }

    private void close(Instant quietSince) {
        List<Group> due = new ArrayList<>();
        boolean closingAll = quietSince.equals(Instant.MAX);
        synchronized (open) {
            var it = open.values().iterator();
            while (it.hasNext()) {
                Group g = it.next();
                if (!g.last.isAfter(quietSince)) {
                    if (!closingAll && undecided(g) && resync(g)) {
                        // judged once qkcm's controller synced the object again, with upstream's write in its cache
                        g.resynced = true;
                        g.last = clock.instant();
                        continue;
                    }
                    due.add(g);
                    it.remove();
                }
            }
        }
        due.forEach(this::classify);
    }

    /**
     * Whether a quiet group would count against qkcm only because no sync of qkcm's started after upstream's
     * last write: a sync that started just before it may have read the cache after it arrived (and agreed) or
     * before (and not), which its start time cannot tell. Such a group gets one more sync of its objects, asked
     * of the controllers that synced them, and one more window.
     */
    private boolean undecided(Group g) {
        if (g.resynced || g.upstream.isEmpty() || g.upstream.stream().allMatch(a -> a.controller().equals(NO_MANAGER))) {
            return false;
        }
        if (lostRace(g.upstream.get(g.upstream.size() - 1), g.lastActionTime())) {
            return false;
        }
        List<ShadowAction> qkcm = g.qkcm.stream().filter(a -> a.accepted() || a.code() == 404 || a.code() == 409).toList();
        String verb = g.first().verb();
        return switch (verb) {
            case "delete" -> false;
            case "create" -> g.upstream.size() > (!g.key.endsWith("*") ? Math.min(1, qkcm.size()) : qkcm.size());
            default -> qkcm.isEmpty() || !sharedState(verb, qkcm, g.upstream).isEmpty();
        };
    }

    /** Asks every controller that synced one of the group's objects to sync it again; false if there is none. */
    private boolean resync(Group g) {
        List<Runnable> asks = new ArrayList<>();
        for (ShadowAction a : g.upstream) {
            for (String object : aboutObjects(a)) {
                Map<String, Runnable> r = resyncs.get(object);
                if (r != null) {
                    asks.addAll(r.values());
                }
            }
        }
        asks.stream().distinct().forEach(Runnable::run);
        return !asks.isEmpty();
    }

    private void classify(Group g) {
        String controller = g.qkcm.isEmpty() ? upstreamController(g) : g.qkcm.get(0).controller();
        long terminating = g.qkcm.stream().filter(this::namespaceTerminating).count();
        if (terminating > 0) {
            count(g, controller, NAMESPACE_TERMINATING, (int) terminating, List.of());
        }
        List<ShadowAction> refused = g.qkcm.stream()
                .filter(a -> !a.accepted() && a.code() != 404 && a.code() != 409 && !namespaceTerminating(a)).toList();
        if (!refused.isEmpty()) {
            ShadowAction r = refused.get(refused.size() - 1);
            count(g, controller, REJECTED, 1, List.of("dry run answered " + r.code() + ": " + ShadowDiff.statusMessage(r.object())));
        }
        List<ShadowAction> qkcm = g.qkcm.stream().filter(a -> a.accepted() || a.code() == 404 || a.code() == 409).toList();
        String verb = g.first().verb();
        switch (verb) {
            case "create" -> {
                if (qkcm.isEmpty() && g.upstream.stream().allMatch(a -> a.controller().equals(NO_MANAGER))) {
                    return; // a creation of no known writer that qkcm did not intend: as a deletion, not counted
                }
                if (!g.key.endsWith("*") && qkcm.size() > 1) {
                    // a named object is created once: repeated attempts (its dry-run creation never shows in the
                    // cache, so a sync before upstream's creation arrives tries again) are one intent
                    qkcm = qkcm.subList(0, 1);
                }
                // generated names: each creation of qkcm's pairs first with one of upstream's it equals (a DaemonSet's
                // pods differ only by their node), then the rest in order
                List<ShadowAction> theirs = new ArrayList<>(g.upstream);
                List<ShadowAction> mine = new ArrayList<>();
                for (ShadowAction a : qkcm) {
                    int same = -1;
                    for (int i = 0; i < theirs.size() && same < 0; i++) {
                        same = ShadowDiff.diff(verb, "", a, theirs.get(i)).isEmpty() ? i : -1;
                    }
                    if (same >= 0) {
                        count(g, controller, MATCHED, 1, List.of());
                        theirs.remove(same);
                    } else {
                        mine.add(a);
                    }
                }
                int pairs = Math.min(mine.size(), theirs.size());
                for (int i = 0; i < pairs; i++) {
                    List<String> diff = ShadowDiff.diff(verb, "", mine.get(i), theirs.get(i));
                    count(g, controller, diff.isEmpty() ? MATCHED : DIFFERENT_CONTENT, 1, diff);
                }
                if (mine.size() > pairs) {
                    count(g, controller, ONLY_QKCM, mine.size() - pairs, List.of());
                }
                List<ShadowAction> surplus = theirs.subList(pairs, theirs.size());
                long converged = surplus.stream().filter(this::lostRace).count();
                if (converged > 0) {
                    count(g, controller, CONVERGED, (int) converged, List.of());
                }
                if (surplus.size() > converged) {
                    count(g, controller, ONLY_UPSTREAM, (int) (surplus.size() - converged), List.of());
                }
            }
            case "delete" -> {
                if (!qkcm.isEmpty()) {
                    // content of a namespace seen deleted: its deletion proves the content went (the namespace
                    // controller deletes kinds no informer here watches)
                    boolean gone = !g.upstream.isEmpty() || deletedNamespaces.containsKey(g.first().namespace());
                    count(g, controller, gone ? MATCHED : ONLY_QKCM, 1, List.of());
                }
            }
            default -> {
                // writes that left no field manager (removals): whose they were cannot be told; alone they confirm an
                // update qkcm meant when the object reached the state it meant, else they are not counted
                List<ShadowAction> upstream = g.upstream.stream().filter(a -> !a.controller().equals(NO_MANAGER)).toList();
                if (upstream.isEmpty() && !g.upstream.isEmpty()) {
                    if (!qkcm.isEmpty() && qkcm.stream().anyMatch(ShadowAction::accepted)
                            && sharedState(verb, qkcm, g.upstream).isEmpty()) {
                        count(g, controller, MATCHED, 1, List.of());
                    } else if (!qkcm.isEmpty()) {
                        count(g, controller, ONLY_QKCM, 1, describe(qkcm.get(qkcm.size() - 1)));
                    }
                    return;
                }
                if (!qkcm.isEmpty() && !upstream.isEmpty()) {
                    List<String> diff = sharedState(verb, qkcm, upstream);
                    ShadowAction theirs = upstream.get(upstream.size() - 1);
                    ShadowAction mine = qkcm.get(qkcm.size() - 1);
                    Instant after = mine.time().isAfter(theirs.time()) ? mine.time() : theirs.time();
                    if (!diff.isEmpty() && lostRace(theirs, after)) {
                        // each side wrote the state its cache showed (the two caches step through them at different
                        // moments); after both last writes qkcm synced with upstream's in its cache and had nothing
                        // to change
                        count(g, controller, CONVERGED, 1, List.of());
                    } else {
                        count(g, controller, diff.isEmpty() ? MATCHED : DIFFERENT_CONTENT, 1, diff);
                    }
                } else if (!qkcm.isEmpty() && verb.equals("event") && qkcm.stream().allMatch(this::conflictEvent)) {
                    // qkcm's write met upstream's (409: an update of an older version, or the create of an object
                    // upstream had just created) and said so in a Warning, as upstream does when it loses such a
                    // race; the retry syncs with upstream's write
                    count(g, controller, CONVERGED, 1, List.of());
                } else if (!qkcm.isEmpty() && verb.equals("event") && saidBeforeShadowMode(qkcm)) {
                    // said at qkcm's start what upstream's controller said at its own, before shadow mode started
                    count(g, controller, MATCHED, 1, List.of());
                } else if (!qkcm.isEmpty()) {
                    count(g, controller, ONLY_QKCM, 1, describe(qkcm.get(qkcm.size() - 1)));
                } else if (!upstream.isEmpty()) {
                    boolean converged = upstream.stream().allMatch(this::lostRace);
                    count(g, controller, converged ? CONVERGED : ONLY_UPSTREAM, 1,
                            converged ? List.of() : syncsAround(upstream.get(0)));
                }
            }
        }
    }

    /**
     * Updates and events: the two sides agree when some write of qkcm's says what some write of upstream's
     * says (each side writes the states its cache showed it, and the two caches step through them at
     * different moments); else the difference between the last of each.
     */
    private static List<String> sharedState(String verb, List<ShadowAction> qkcm, List<ShadowAction> upstream) {
        List<ShadowAction> accepted = qkcm.stream().filter(ShadowAction::accepted).toList();
        if (accepted.isEmpty()) {
            return List.of(); // only conflicts or NotFound: upstream had written first, nothing to compare
        }
        for (ShadowAction mine : accepted) {
            for (ShadowAction theirs : upstream) {
                if (ShadowDiff.diff(verb, mine.subresource(), mine, theirs).isEmpty()) {
                    return List.of();
                }
            }
        }
        ShadowAction mine = accepted.get(accepted.size() - 1);
        return ShadowDiff.diff(verb, mine.subresource(), mine, upstream.get(upstream.size() - 1));
    }

    /**
     * Whether upstream won the race for {@code action}: the write reached qkcm's cache and qkcm's controller
     * then synced the object it is about (its controller owner, itself, a same-named primary, or for an event
     * the involved object) and completed without writing it. A sync shortly before upstream's write proves
     * nothing either way (its cache may have lacked what upstream's write was based on), so it is not held
     * against the race: "converged" says qkcm ended agreeing with upstream's write, not that it would have made
     * it first.
     */
    private boolean lostRace(ShadowAction action) {
        return lostRace(action, action.time());
    }

    /** As {@link #lostRace(ShadowAction)}, with a sync that started at {@code notBefore} or later. */
    private boolean lostRace(ShadowAction action, Instant notBefore) {
        long t = notBefore.toEpochMilli();
        for (String object : aboutObjects(action)) {
            Deque<Long> starts = syncs.get(object);
            if (starts == null) {
                continue;
            }
            synchronized (starts) {
                if (starts.stream().anyMatch(s -> s >= t)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether qkcm's events, all made during its start, say what an event of upstream's from before shadow mode
     * started says (the same object, reason and message).
     */
    private boolean saidBeforeShadowMode(List<ShadowAction> qkcm) {
        Instant ended = startEnded;
        if (ended.equals(Instant.MIN) || qkcm.stream().anyMatch(a -> a.time().isAfter(ended))) {
            return false;
        }
        ShadowAction prior = priorEvents.get(qkcm.get(0).key());
        return prior != null && qkcm.stream().anyMatch(a -> ShadowDiff.diff("event", "", a, prior).isEmpty());
    }

    /**
     * Whether an event of qkcm's reports a write of its answered 409, Conflict ("the object has been modified") or
     * AlreadyExists, and a dry run of the same controller was answered 409 within the window before it.
     */
    private boolean conflictEvent(ShadowAction a) {
        if (a.object() == null) {
            return false;
        }
        String message = String.valueOf(a.object().get("message"));
        if (!message.contains("the object has been modified") && !ALREADY_EXISTS.matcher(message).find()) {
            return false;
        }
        Deque<Instant> times = conflicts.get(a.controller());
        if (times == null) {
            return false;
        }
        Instant from = a.time().minus(window);
        synchronized (times) {
            return times.stream().anyMatch(t -> !t.isBefore(from) && !t.isAfter(a.time()));
        }
    }

    /**
     * A dry run refused because its namespace is being deleted: a Status with the cause NamespaceTerminating, or (an
     * error's body is not always read through the write layer) a create refused 403 in a namespace seen deleted or
     * given a deletionTimestamp lately, which the API server's NamespaceLifecycle admission refuses so.
     */
    boolean namespaceTerminating(ShadowAction a) {
        if (a.code() != 403) {
            return false;
        }
        if (a.object() != null && a.object().get("details") instanceof Map<?, ?> details
                && details.get("causes") instanceof List<?> causes
                && causes.stream().anyMatch(c -> c instanceof Map<?, ?> m && "NamespaceTerminating".equals(m.get("reason")))) {
            return true;
        }
        return a.verb().equals("create") && !a.namespace().isEmpty() && deletedNamespaces.containsKey(a.namespace());
    }

    /** What an unpaired action said: an event's message, else the dry run's answer code. */
    private static List<String> describe(ShadowAction a) {
        if (a.verb().equals("event") && a.object() != null) {
            return List.of("message: " + a.object().get("message"));
        }
        return a.side() == Side.QKCM ? List.of("dry run answered " + a.code()) : List.of();
    }

    /** For an unpaired upstream write: when qkcm last synced the objects it is about, relative to the write. */
    private List<String> syncsAround(ShadowAction a) {
        List<String> out = new ArrayList<>();
        long t = a.time().toEpochMilli();
        for (String object : aboutObjects(a)) {
            Deque<Long> starts = syncs.get(object);
            String times = "never";
            if (starts != null) {
                synchronized (starts) {
                    times = String.join(", ", starts.stream().map(s -> (s >= t ? "+" : "") + (s - t) + "ms").toList());
                }
            }
            out.add("qkcm syncs of " + object + ": " + times);
        }
        return out;
    }

    private static List<String> aboutObjects(ShadowAction a) {
        List<String> out = new ArrayList<>();
        Map<String, Object> o = a.object();
        if (o == null) {
            return out;
        }
        if (a.verb().equals("event") && o.get("involvedObject") instanceof Map<?, ?> about) {
            out.add(objectKey(about.get("kind"), about.get("namespace"), about.get("name")));
            return out;
        }
        Map<String, Object> meta = o.get("metadata") instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
        if (meta.get("ownerReferences") instanceof List<?> owners) {
            for (Object owner : owners) {
                if (owner instanceof Map<?, ?> ref && Boolean.TRUE.equals(ref.get("controller"))) {
                    out.add(objectKey(ref.get("kind"), meta.get("namespace"), ref.get("name")));
                }
            }
        }
        out.add(objectKey(o.get("kind"), meta.get("namespace"), meta.get("name")));
        // an object a controller writes for a primary of the same name and no owner reference (a Service's Endpoints)
        out.add(objectKey(ANY_KIND, meta.get("namespace"), meta.get("name")));
        if (!(meta.get("ownerReferences") instanceof List<?> owners && !owners.isEmpty())
                && meta.get("namespace") instanceof String ns && !ns.isEmpty()) {
            // an object without owner that a controller keeps per namespace, syncing the Namespace (a namespace's
            // root CA ConfigMap, its default ServiceAccount)
            out.add(objectKey("Namespace", "", ns));
        }
        return out;
    }

    private static String objectKey(Object kind, Object namespace, Object name) {
        String ns = namespace instanceof String s && !s.isEmpty() ? s + "/" : "";
        return kind + " " + ns + name;
    }

    /** A qkcm controller's sync of {@code key} (a {@code kind}) completed without error. */
    public void synced(String controller, String kind, String key, long startedAtMillis) {
        synced(controller, kind, key, startedAtMillis, null);
    }

    /**
     * As {@link #synced(String, String, String, long)}, with {@code resync} queueing the key again in that
     * controller ({@code KeyReconciler.SyncListener}; null when it cannot be asked).
     */
    public void synced(String controller, String kind, String key, long startedAtMillis, Runnable resync) {
        for (String object : List.of(kind + " " + key, ANY_KIND + " " + key)) {
            if (resync != null) {
                resyncs.computeIfAbsent(object, k -> new ConcurrentHashMap<>()).put(controller + " " + kind, resync);
            }
            Deque<Long> starts = syncs.computeIfAbsent(object, k -> new ArrayDeque<>());
            synchronized (starts) {
                starts.addLast(startedAtMillis);
                while (starts.size() > 32) {
                    starts.removeFirst();
                }
            }
        }
    }

    private String upstreamController(Group g) {
        ShadowAction a = g.first();
        if (a.verb().equals("event") && a.object() != null && a.object().get("source") instanceof Map<?, ?> source
                && source.get("component") instanceof String component && !component.isEmpty()) {
            return component;
        }
        return writers.getOrDefault(a.verb() + " " + a.resource(), UNATTRIBUTED);
    }

    private void count(Group g, String controller, String cls, int n, List<String> diff) {
        Counter.builder("qkcm.shadow.actions")
                .description("Writes compared in shadow mode, by controller and class (matched, only-qkcm, only-upstream, different-content, rejected).")
                .tags("controller", controller, "class", cls).register(registry).increment(n);
        totals.computeIfAbsent(controller + "\t" + cls, k -> new AtomicLong()).addAndGet(n);
        if (!isMismatch(cls)) {
            return;
        }
        Mismatch m = new Mismatch(clock.instant(), controller, cls, g.key, g.qkcm.size(), g.upstream.size(), diff);
        synchronized (latest) {
            latest.addFirst(m);
            while (latest.size() > LATEST) {
                latest.removeLast();
            }
        }
        LOG.warnf("shadow mismatch: class=%s controller=%s action=\"%s\" qkcm=%d upstream=%d count=%d diff=%s", cls,
                controller, g.key, g.qkcm.size(), g.upstream.size(), n, diff);
    }

    /** Counts by controller, then class. */
    public Map<String, Map<String, Long>> totals() {
        Map<String, Map<String, Long>> out = new java.util.TreeMap<>();
        totals.forEach((k, v) -> {
            String[] p = k.split("\t");
            out.computeIfAbsent(p[0], x -> new java.util.TreeMap<>()).put(p[1], v.get());
        });
        return out;
    }

    /** The count of one class over every controller. */
    public long total(String cls) {
        return totals.entrySet().stream().filter(e -> e.getKey().endsWith("\t" + cls))
                .mapToLong(e -> e.getValue().get()).sum();
    }

    /** The latest mismatches, newest first. */
    public List<Mismatch> latest() {
        synchronized (latest) {
            return List.copyOf(latest);
        }
    }

    /** Writes qkcm meant to send (every one answered by a dry run). */
    public long intended() {
        return intended.get();
    }

    /** Keys of the groups not yet classified. */
    public List<String> openKeys() {
        synchronized (open) {
            return List.copyOf(open.keySet());
        }
    }

    @Override
    public void close() {
        if (sweeper != null) {
            sweeper.shutdownNow();
        }
    }

    private final class Group {
        final String key;
        final List<ShadowAction> qkcm = new ArrayList<>();
        final List<ShadowAction> upstream = new ArrayList<>();
        Instant last = clock.instant();

        Group(String key) {
            this.key = key;
        }

        /** Whether it was kept open for a sync qkcm was asked for ({@link #undecided}). */
        boolean resynced;

        ShadowAction first() {
            return qkcm.isEmpty() ? upstream.get(0) : qkcm.get(0);
        }

        /** When its last action was taken. */
        Instant lastActionTime() {
            Instant t = Instant.MIN;
            for (List<ShadowAction> side : List.of(qkcm, upstream)) {
                for (ShadowAction a : side) {
                    t = a.time().isAfter(t) ? a.time() : t;
                }
            }
            return t;
        }
    }
}
