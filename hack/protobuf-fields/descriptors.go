package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/gogo/protobuf/proto"
	"github.com/gogo/protobuf/protoc-gen-gogo/descriptor"

	_ "k8s.io/api/admissionregistration/v1"
	_ "k8s.io/api/coordination/v1"
	_ "k8s.io/api/discovery/v1"
	_ "k8s.io/api/events/v1"
)

// The generated.proto files whose messages qkcm decodes; their imports are added before them.
var descriptorFiles = []string{
	"k8s.io/api/core/v1/generated.proto",
	"k8s.io/api/apps/v1/generated.proto",
	"k8s.io/api/batch/v1/generated.proto",
	"k8s.io/api/policy/v1/generated.proto",
	"k8s.io/api/certificates/v1/generated.proto",
	"k8s.io/api/autoscaling/v2/generated.proto",
	"k8s.io/api/storage/v1/generated.proto",
	"k8s.io/api/rbac/v1/generated.proto",
	"k8s.io/api/networking/v1/generated.proto",
	"k8s.io/api/scheduling/v1/generated.proto",
	"k8s.io/api/discovery/v1/generated.proto",
	"k8s.io/api/coordination/v1/generated.proto",
	"k8s.io/api/events/v1/generated.proto",
	"k8s.io/api/admissionregistration/v1/generated.proto",
	"k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
}

// writeDescriptors writes a FileDescriptorSet of the API's protobuf descriptors, as the Go types of this
// Kubernetes version registered them, dependencies first.
func writeDescriptors(out io.Writer) {
	done := map[string]bool{}
	var set bytes.Buffer
	var add func(name string)
	add = func(name string) {
		if done[name] {
			return
		}
		done[name] = true
		gz := proto.FileDescriptor(name)
		if gz == nil {
			panic("no registered descriptor " + name)
		}
		r, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			panic(err)
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			panic(err)
		}
		var file descriptor.FileDescriptorProto
		if err := proto.Unmarshal(raw, &file); err != nil {
			panic(err)
		}
		// gogo's options (Go naming, marshalling) mean nothing to a reader of the wire: the import goes,
		// the option values stay as unknown fields
		deps := file.Dependency[:0]
		for _, dep := range file.Dependency {
			if dep == "github.com/gogo/protobuf/gogoproto/gogo.proto" {
				continue
			}
			add(dep)
			deps = append(deps, dep)
		}
		file.Dependency = deps
		if raw, err = proto.Marshal(&file); err != nil {
			panic(err)
		}
		// FileDescriptorSet.file = 1
		set.WriteByte(1<<3 | 2)
		set.Write(binary.AppendUvarint(nil, uint64(len(raw))))
		set.Write(raw)
	}
	for _, name := range descriptorFiles {
		add(name)
	}
	if _, err := out.Write(set.Bytes()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
