// Command protobuf-fields lists, for qkcm's protobuf decoder generator, the fields of the API's Go types
// whose JSON form the protobuf descriptors cannot tell:
//   - "omitempty-scalar": a non-pointer string, bool or number with `json:",omitempty"`. gogo-protobuf
//     writes such a field even when it is zero, encoding/json leaves it out: the decoder skips its zero.
//     (Pointer fields are written only when set, and fields without omitempty keep their zero.)
//   - "null-when-empty": a slice or map without omitempty. Protobuf writes nothing for it when empty and
//     the API server, decoding it from etcd's protobuf, holds a nil that encoding/json writes as null:
//     the decoder leaves the property null when no element came.
//   - "json-name" (and a fourth column): the JSON name of a field whose proto name is not it (go-to-protobuf
//     took the Go field's name, e.g. admissionregistration's Validation.Expression).
//
// Output: "<proto message full name>\t<proto field name>\t<kind>" per line, sorted; regenerate with
// `cd hack/protobuf-fields && go run . > ../../app/src/test/resources/io/qkcm/runtime/protobuf/go-fields.tsv`.
//
// With the argument "descriptors" it writes instead the protobuf descriptors of the API (a
// FileDescriptorSet, as this Kubernetes version's Go types register them) that the generator reads:
// `go run . descriptors > ../../app/src/test/resources/io/qkcm/runtime/protobuf/kubernetes-api.desc`.
package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "descriptors" {
		writeDescriptors(os.Stdout)
		return
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, certificatesv1.AddToScheme, autoscalingv2.AddToScheme, storagev1.AddToScheme,
		rbacv1.AddToScheme, networkingv1.AddToScheme, schedulingv1.AddToScheme, discoveryv1.AddToScheme,
		coordinationv1.AddToScheme, eventsv1.AddToScheme, admissionregistrationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	seen := map[reflect.Type]bool{}
	lines := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		message := strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			walk(f.Type)
			name := ""
			for _, part := range strings.Split(f.Tag.Get("protobuf"), ",") {
				if strings.HasPrefix(part, "name=") {
					name = strings.TrimPrefix(part, "name=")
				}
			}
			json := f.Tag.Get("json")
			if name == "" || json == "-" || strings.Contains(json, ",inline") {
				continue
			}
			if jsonName := strings.Split(json, ",")[0]; jsonName != "" && jsonName != name {
				lines[message+"\t"+name+"\tjson-name\t"+jsonName] = true
			}
			omitempty := strings.Contains(json, ",omitempty")
			switch f.Type.Kind() {
			case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32,
				reflect.Uint64, reflect.Float32, reflect.Float64:
				if omitempty {
					lines[message+"\t"+name+"\tomitempty-scalar"] = true
				}
			case reflect.Slice, reflect.Map:
				if !omitempty {
					lines[message+"\t"+name+"\tnull-when-empty"] = true
				}
			}
		}
	}
	for _, t := range scheme.AllKnownTypes() {
		walk(t)
	}
	walk(reflect.TypeOf(metav1.Status{}))
	walk(reflect.TypeOf(metav1.WatchEvent{}))
	sorted := make([]string, 0, len(lines))
	for l := range lines {
		sorted = append(sorted, l)
	}
	sort.Strings(sorted)
	for _, l := range sorted {
		fmt.Println(l)
	}
}
