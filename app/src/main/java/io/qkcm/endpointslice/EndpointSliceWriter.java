package io.qkcm.endpointslice;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.runtime.clients.ClientGoCreates;

/**
 * The API writes of a reconcile (upstream uses the clientset directly); an interface so the packing
 * logic can be unit-tested without an API server. Failures are thrown as the client throws them.
 */
public interface EndpointSliceWriter {

    EndpointSlice create(EndpointSlice slice);

    EndpointSlice update(EndpointSlice slice);

    void delete(String namespace, String name);

    /**
     * Writes on {@code client}. Creations (from generateName) are sent as client-go sends them, never
     * again after an I/O error: fabric8's re-send would make a second slice ({@link ClientGoCreates}).
     */
    static EndpointSliceWriter of(KubernetesClient client) {
        ClientGoCreates creations = new ClientGoCreates(client);
        return new EndpointSliceWriter() {
            @Override
            public EndpointSlice create(EndpointSlice slice) {
                return creations.create(c -> c.discovery().v1().endpointSlices()
                        .inNamespace(slice.getMetadata().getNamespace()).resource(slice).create());
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
