package io.qkcm.controller.resourcequota.quota;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * generic.Registry: the evaluators by group resource. The quota monitor adds object-count evaluators
 * for resources discovered later, while workers read: access is synchronized.
 */
public final class Registry {

    private final Map<GroupResource, Evaluator> evaluators = new LinkedHashMap<>();

    public Registry(List<Evaluator> initial) {
        initial.forEach(this::add);
    }

    public synchronized void add(Evaluator e) {
        evaluators.put(e.groupResource(), e);
    }

    public synchronized void remove(Evaluator e) {
        evaluators.remove(e.groupResource(), e);
    }

    public synchronized Evaluator get(GroupResource gr) {
        return evaluators.get(gr);
    }

    public synchronized List<Evaluator> list() {
        return new ArrayList<>(evaluators.values());
    }
}
