package io.qkcm.runtime.informers;

import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;

/** A reconnecting watcher that records "ACTION name" for every event but bookmarks, and "closed …" on an error. */
class RecordingWatcher<T extends HasMetadata> implements Watcher<T> {

    private final List<String> seen;

    RecordingWatcher(List<String> seen) {
        this.seen = seen;
    }

    @Override
    public void eventReceived(Action action, T resource) {
        if (action != Action.BOOKMARK) {
            seen.add(action + " " + resource.getMetadata().getName());
        }
    }

    @Override
    public void onClose(WatcherException cause) {
        seen.add("closed " + cause);
    }

    @Override
    public boolean reconnecting() {
        return true;
    }
}
