package io.qkcm.controller.resourcequota.quota;

/** schema.GroupResource; {@code group} is empty for the core group. */
public record GroupResource(String group, String resource) {

    @Override
    public String toString() {
        return group.isEmpty() ? resource : resource + "." + group;
    }
}
