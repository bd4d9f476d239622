// Golden vectors for qkcm's io.qkcm.controller.devicetainteviction.DeviceCel: each expression on stdin (the
// first column of a cel-library-cases.tsv line; blank and # lines are copied) is compiled and evaluated by
// k8s.io/dynamic-resource-allocation/cel v0.34.4 (the DRA selector environment upstream's device taint
// eviction uses) against DeviceCelLibrariesTest's device, and printed as
//
//	expression<TAB>true|false|COMPILE<TAB>error (<nil>: none; for COMPILE the compile error's detail)
//
// Nothing here is part of qkcm at runtime.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"
)

func main() {
	device := cel.Device{
		Driver: "dra.example.com",
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"model": {StringValue: ptr.To("A100 80GB")},
			"index": {IntValue: ptr.To[int64](3)},
			"numa":  {IntValue: ptr.To[int64](1)},
			"ip":    {StringValue: ptr.To("10.0.0.7")},
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory": {Value: resource.MustParse("80Gi")},
		},
	}
	compiler := cel.GetCompiler(cel.Features{})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := in.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			fmt.Println(line)
			continue
		}
		expression, _, _ := strings.Cut(line, "\t")
		compiled := compiler.CompileCELExpression(expression, cel.Options{})
		if compiled.Error != nil {
			fmt.Printf("%s\tCOMPILE\t%s\n", expression, compiled.Error.Detail)
			continue
		}
		matches, _, err := compiled.DeviceMatches(context.Background(), device)
		errText := "<nil>"
		if err != nil {
			errText = err.Error()
		}
		fmt.Printf("%s\t%t\t%s\n", expression, matches, errText)
	}
	if err := in.Err(); err != nil {
		panic(err)
	}
}
