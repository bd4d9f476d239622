/**
 * Kubernetes' protobuf wire format ({@code application/vnd.kubernetes.protobuf}), read straight into and
 * written straight from fabric8's model classes, as kube-controller-manager talks to the API server for
 * built-in types. The entry point is {@link io.qkcm.runtime.protobuf.KubernetesProtobuf}: {@code decode} (an
 * object, a list or a Status in its {@code k8s\0} + runtime.Unknown envelope), {@code decodeWatchEvent} (one
 * frame of a watch stream, framed by {@link io.qkcm.runtime.protobuf.ProtobufWatchFrames}), {@code encode}
 * (a request body), {@code canDecode} and {@code notDecodable} (the kinds left to JSON, with the reason);
 * {@code decodeForCache} and {@code decodeWatchEventForCache} skip managedFields unread, as qkcm's JSON decoding
 * of objects bound for an informer's cache does ({@code runtime.CachedObjects}; its shared empty
 * additionalProperties map is not mirrored here).
 * Not wired into the informers or clients yet.
 *
 * <h2>Generated, not written</h2>
 * {@code *Proto.java} and {@code ProtobufDecoders.java} are written by {@code ProtobufDecoderGenerator}
 * (app/src/test/java, this package) from
 * <ul>
 * <li>{@code kubernetes-api.desc} (app/src/test/resources, this package): the protobuf descriptors (a
 * FileDescriptorSet) exactly as the Go types of k8s.io/api v0.34.4 register them, which
 * {@code hack/protobuf-fields descriptors} exports (Maven's {@code io.kubernetes:client-java-proto:26.0.0},
 * the first source, lacks discovery, coordination and events and carries 1.35 fields),</li>
 * <li>fabric8's model classes (each proto field is matched to the {@code @JsonProperty} of its JSON name,
 * which is the proto field's name but for the few {@code go-fields.tsv} lists), and</li>
 * <li>{@code go-fields.tsv} (app/src/test/resources, this package), which {@code hack/protobuf-fields} (a Go
 * program over the API's Go types) writes: the facts of the JSON encoding the descriptors do not carry — a
 * non-pointer scalar with omitempty (gogo writes its zero, JSON leaves it out, so the decoder skips its zero)
 * and a slice or map without omitempty (absent in protobuf, {@code null} in the API server's JSON), and the
 * JSON name of the few fields whose proto name is the Go field's (admissionregistration's
 * {@code Validation.Expression}).</li>
 * </ul>
 * Each message becomes static methods that switch on the wire tag and call the model's setters (decoding), or
 * call its getters and write back to front ({@link io.qkcm.runtime.protobuf.ProtobufWriter}, encoding): no
 * reflection at run time, so native-image safe. Regenerate with
 * <pre>
 * (cd hack/protobuf-fields &amp;&amp; go run . &gt; ../../app/src/test/resources/io/qkcm/runtime/protobuf/go-fields.tsv \
 *   &amp;&amp; go run . descriptors &gt; ../../app/src/test/resources/io/qkcm/runtime/protobuf/kubernetes-api.desc)
 * nice ./mvnw -B -ntp -o -pl app test -Dqkcm.control-plane.skip=true -Dtest=ProtobufGeneratedSourcesTest -Dqkcm.protobuf.regenerate=true
 * </pre>
 * Without the property, {@code ProtobufGeneratedSourcesTest} fails when the committed sources differ from what
 * the generator writes (a fabric8 or Kubernetes API upgrade, a generator change). The kinds are listed in
 * the generator's {@code ROOTS}.
 *
 * <h2>Exactly what JSON yields, or nothing</h2>
 * The proof is {@code ProtobufApiServerTest}: rich objects of each kind, read from the real kube-apiserver in
 * JSON (decoded by {@link io.qkcm.runtime.Json#api()}) and in protobuf, give equal model objects; lists, a
 * Status and a watch stream too; objects encoded here are created and status-updated on the API server and
 * read back equal. Special types: Quantity (its string), IntOrString (by its type), Time (RFC 3339 seconds in
 * UTC, nanos dropped as upstream; the empty message is null), MicroTime (6 fraction digits), Duration (Go's
 * Duration.String(); decoded only), FieldsV1 and RawExtension (their raw JSON, decoded with
 * {@code Json.api()}), bytes (base64 strings), maps (LinkedHashMap in wire order).
 * <p>
 * Nothing is lost silently:
 * <ul>
 * <li>a proto field fabric8 has no property for (a newer API field, e.g. VolumeProjection.podCertificate in
 * fabric8 7.4) goes into the object's additionalProperties as JSON's untyped values would (maps, lists,
 * strings, Integer/Long, booleans); an embedded Go struct JSON inlines (Volume's VolumeSource) lands on the
 * enclosing object; a field that could be neither makes the generator list the kind in {@code notDecodable};</li>
 * <li>a wire field number (or wire type) the descriptors do not have, i.e. a newer API server, fails the
 * decoding with {@link io.qkcm.runtime.protobuf.ProtobufDecodingException.Reason#UNKNOWN_FIELD}: the caller
 * asks again in JSON (and may keep JSON for that kind);</li>
 * <li>encoding refuses ({@link io.qkcm.runtime.protobuf.ProtobufEncodingException}) an object with a value
 * protobuf has no field for (additionalProperties, a property without a proto field): the caller writes JSON.</li>
 * </ul>
 */
package io.qkcm.runtime.protobuf;
