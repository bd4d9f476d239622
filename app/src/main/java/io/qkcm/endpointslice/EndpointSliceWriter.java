package io.qkcm.endpointslice;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The API writes of a reconcile (upstream uses the clientset directly); an interface so the packing
 * logic can be unit-tested without an API server. Failures are thrown as the client throws them.
 */
public interface EndpointSliceWriter {

    EndpointSlice create(EndpointSlice slice);

    EndpointSlice update(EndpointSlice slice);

    void delete(String namespace, String name);

    static EndpointSliceWriter of(KubernetesClient client) {
        return new EndpointSliceWriter() {
            @Override
            public EndpointSlice create(EndpointSlice slice) {
                return client.discovery().v1().endpointSlices().inNamespace(slice.getMetadata().getNamespace())
                        .resource(slice).create();
            }

            @Override
            public EndpointSlice update(EndpointSlice slice) {
                return client.discovery().v1().endpointSlices().inNamespace(slice.getMetadata().getNamespace())
                        .resource(slice).update();
            }

            @Override
            public void delete(String namespace, String name) {
                client.discovery().v1().endpointSlices().inNamespace(namespace).withName(name).delete();
            }
        };
    }
}
