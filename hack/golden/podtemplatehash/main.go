// Golden vectors for qkcm's pod-template-hash: prints, for pod templates as stored by a real
// kube-apiserver (JSON, one per line on stdin), upstream's spew text (dump.ForHash) and
// controller.ComputeHash with and without a collisionCount. With "schema" as argument, prints the
// Go struct layout of v1.PodTemplateSpec (field order, Go type names, json names) that qkcm's Java
// renderer is driven by. Nothing here is part of qkcm at runtime.
package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
	endpointsv1 "k8s.io/kubernetes/pkg/api/v1/endpoints"
	"k8s.io/kubernetes/pkg/controller"
)

type field struct {
	Name     string `json:"name"`
	JSON     string `json:"json,omitempty"`
	Inline   bool   `json:"inline,omitempty"`
	Type     string `json:"type"`
	Exported bool   `json:"exported"`
}

type typeInfo struct {
	Kind   string  `json:"kind"`
	Elem   string  `json:"elem,omitempty"`
	Key    string  `json:"key,omitempty"`
	Fields []field `json:"fields,omitempty"`
}

func walk(t reflect.Type, out map[string]*typeInfo) {
	name := t.String()
	if _, ok := out[name]; ok {
		return
	}
	ti := &typeInfo{Kind: t.Kind().String()}
	out[name] = ti
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array:
		ti.Elem = t.Elem().String()
		walk(t.Elem(), out)
	case reflect.Map:
		ti.Key = t.Key().String()
		ti.Elem = t.Elem().String()
		walk(t.Key(), out)
		walk(t.Elem(), out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			jn := strings.Split(tag, ",")[0]
			fi := field{Name: f.Name, Type: f.Type.String(), Exported: f.IsExported()}
			if jn == "" && f.Anonymous && f.IsExported() {
				fi.Inline = true
			} else if jn != "-" && f.IsExported() {
				if jn == "" {
					jn = f.Name
				}
				fi.JSON = jn
			}
			ti.Fields = append(ti.Fields, fi)
			walk(f.Type, out)
		}
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "schema" {
		// schema [podtemplatespec|endpointsubset|discoveryendpointport]
		root := reflect.TypeOf(v1.PodTemplateSpec{})
		if len(os.Args) > 2 {
			root = schemaRoots[os.Args[2]]
		}
		out := map[string]*typeInfo{}
		walk(root, out)
		b, _ := json.MarshalIndent(out, "", " ")
		fmt.Println(string(b))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "md5" {
		md5Vectors()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "repack" {
		repackVectors()
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var t v1.PodTemplateSpec
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		one, five := int32(1), int32(5)
		enc.Encode(map[string]interface{}{
			"template": json.RawMessage(line),
			"spew":     dump.ForHash(t),
			"hash":     controller.ComputeHash(&t, nil),
			"hash1":    controller.ComputeHash(&t, &one),
			"hash5":    controller.ComputeHash(&t, &five),
		})
	}
}

// The types the endpoints controllers order by an md5 over their spew text (RepackSubsets and
// SortSubsets in pkg/api/v1/endpoints; the port ordering of k8s.io/endpointslice/util).
var schemaRoots = map[string]reflect.Type{
	"podtemplatespec":       reflect.TypeOf(v1.PodTemplateSpec{}),
	"endpointsubset":        reflect.TypeOf(v1.EndpointSubset{}),
	"discoveryendpointport": reflect.TypeOf(discovery.EndpointPort{}),
}

// md5Vectors reads {"type": <schema root>, "value": <JSON>} lines and prints upstream's
// hashutil.DeepHashObject md5 (hex) and spew text of each decoded value.
func md5Vectors() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var in struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		v := reflect.New(schemaRoots[in.Type])
		if err := json.Unmarshal(in.Value, v.Interface()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		h := md5.New()
		hashutil.DeepHashObject(h, v.Elem().Interface())
		enc.Encode(map[string]interface{}{
			"type":  in.Type,
			"value": in.Value,
			"spew":  dump.ForHash(v.Elem().Interface()),
			"md5":   hex.EncodeToString(h.Sum(nil)),
		})
	}
}

// repackVectors reads JSON lists of v1.EndpointSubset, one per line, and prints each with
// upstream's RepackSubsets result.
func repackVectors() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var in []v1.EndpointSubset
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		enc.Encode(map[string]interface{}{
			"in":  json.RawMessage(line),
			"out": endpointsv1.RepackSubsets(in),
		})
	}
}
