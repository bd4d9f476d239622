// Command golden fills in upstream's warnings for the type-checking golden cases: it reads
// app/src/test/resources/io/qkcm/controller/validatingadmissionpolicystatus/typechecking-golden.jsonl (one case a
// line: name, an OpenAPI schema or null, a ValidatingAdmissionPolicy), runs k8s.io/apiserver's TypeChecker.Check
// on each with the restmapper of upstream's typechecking_test.go (pods, deployments) and a resolver answering
// the case's schema for every kind, and writes the cases back with the warnings it wrote:
//
//	cd hack/vap-typecheck && F=../../app/src/test/resources/io/qkcm/controller/validatingadmissionpolicystatus/typechecking-golden.jsonl && go run ./golden < $F > $F.new && mv $F.new $F
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

type goldenCase struct {
	Name     string                       `json:"name"`
	Schema   *spec.Schema                 `json:"schema"`
	Policy   v1.ValidatingAdmissionPolicy `json:"policy"`
	Warnings []v1.ExpressionWarning       `json:"warnings"`
}

type fakeResolver struct{ s *spec.Schema }

func (r *fakeResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if r.s == nil {
		return nil, fmt.Errorf("cannot resolve for %v: %w", gvk, resolver.ErrSchemaNotFound)
	}
	return r.s, nil
}

func main() {
	scheme := runtime.NewScheme()
	_ = v1.AddToScheme(scheme)
	_ = fake.AddToScheme(scheme)
	rm := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}})
	k, _, _ := scheme.ObjectKinds(&corev1.Pod{})
	rm.Add(k[0], meta.RESTScopeRoot)
	k, _, _ = scheme.ObjectKinds(&appsv1.Deployment{})
	rm.Add(k[0], meta.RESTScopeRoot)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			panic(err)
		}
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			panic(err)
		}
		tc := &validating.TypeChecker{SchemaResolver: &fakeResolver{c.Schema}, RestMapper: rm}
		warnings := tc.Check(&c.Policy)
		if warnings == nil {
			warnings = []v1.ExpressionWarning{}
		}
		// keep the case's own JSON for name, schema and policy: only the warnings are upstream's
		out := fmt.Sprintf(`{"name": %s, "schema": %s, "policy": %s, "warnings": %s}`,
			raw["name"], raw["schema"], raw["policy"], mustJSON(warnings))
		fmt.Println(out)
	}
}

func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
