// Command declarations prints every function of Kubernetes' stored-expressions CEL environment (the one
// upstream's ValidatingAdmissionPolicy type checking compiles with) with its overloads, as
// app/src/main/resources/io/qkcm/controller/util/cel/kubernetes-cel-functions.json
// holds them:
//
//	cd hack/vap-typecheck && go run ./declarations > ../../app/src/main/resources/io/qkcm/controller/util/cel/kubernetes-cel-functions.json
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"

	"github.com/google/cel-go/common/types"
	"k8s.io/apiserver/pkg/cel/environment"
)

type T struct {
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	Params []*T   `json:"params,omitempty"`
}

func conv(t *types.Type) *T {
	kinds := map[types.Kind]string{types.AnyKind: "any", types.BoolKind: "bool", types.BytesKind: "bytes", types.DoubleKind: "double",
		types.DurationKind: "duration", types.DynKind: "dyn", types.ErrorKind: "error", types.IntKind: "int", types.ListKind: "list",
		types.MapKind: "map", types.NullTypeKind: "null", types.OpaqueKind: "opaque", types.StringKind: "string", types.StructKind: "struct",
		types.TimestampKind: "timestamp", types.TypeKind: "type", types.TypeParamKind: "typeparam", types.UintKind: "uint"}
	out := &T{Kind: kinds[t.Kind()]}
	if out.Kind == "" {
		panic(t.String())
	}
	switch t.Kind() {
	case types.OpaqueKind, types.StructKind, types.TypeParamKind:
		out.Name = t.TypeName()
	}
	for _, p := range t.Parameters() {
		out.Params = append(out.Params, conv(p))
	}
	return out
}

type O struct {
	ID     string `json:"id"`
	Member bool   `json:"member,omitempty"`
	Args   []*T   `json:"args"`
	Result *T     `json:"result"`
}
type F struct {
	Name      string `json:"name"`
	Overloads []O    `json:"overloads"`
}
type M struct {
	Function string `json:"function"`
	Args     int    `json:"args"`
	Receiver bool   `json:"receiver"`
	VarArgs  bool   `json:"varArgs"`
}

func main() {
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true).StoredExpressionsEnv()
	var fs []F
	for name, fd := range env.Functions() {
		f := F{Name: name}
		for _, o := range fd.OverloadDecls() {
			oo := O{ID: o.ID(), Member: o.IsMemberFunction(), Result: conv(o.ResultType())}
			for _, a := range o.ArgTypes() {
				oo.Args = append(oo.Args, conv(a))
			}
			f.Overloads = append(f.Overloads, oo)
		}
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	var ms []M
	for _, m := range env.Macros() {
		ms = append(ms, M{m.Function(), m.ArgCount(), m.IsReceiverStyle(), false})
	}
	sort.Slice(ms, func(i, j int) bool {
		return ms[i].Function < ms[j].Function || ms[i].Function == ms[j].Function && ms[i].Args < ms[j].Args
	})
	_ = ms // the macros are cel-java's, wrapped (Macros.java); listed here to compare by eye: go run ./declarations -macros
	if len(os.Args) > 1 && os.Args[1] == "-macros" {
		_ = json.NewEncoder(os.Stdout).Encode(ms)
		return
	}
	os.Stdout.WriteString("{\"functions\": [\n")
	for i, f := range fs {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(f)
		os.Stdout.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		if i < len(fs)-1 {
			os.Stdout.WriteString(",")
		}
		os.Stdout.WriteString("\n")
	}
	os.Stdout.WriteString("]}\n")
}
