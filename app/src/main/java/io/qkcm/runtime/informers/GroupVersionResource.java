package io.qkcm.runtime.informers;

/** schema.GroupVersionResource; {@code group} is empty for the core ("legacy") group. */
public record GroupVersionResource(String group, String version, String resource) {

    public String groupVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** The collection path, across namespaces when {@code namespace} is empty. */
    public String path(String namespace) {
        StringBuilder b = new StringBuilder(group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version);
        if (namespace != null && !namespace.isEmpty()) {
            b.append("/namespaces/").append(namespace);
        }
        return b.append('/').append(resource).toString();
    }

    /** group/resource, as upstream's GroupResource prints it ({@code resource.group}). */
    public String groupResource() {
        return group.isEmpty() ? resource : resource + "." + group;
    }

    @Override
    public String toString() {
        return groupVersion() + ", Resource=" + resource;
    }
}
