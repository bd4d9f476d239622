// Command csiattachment prints VolumeAttachment names as the CSI attacher of k8s.io/kubernetes v1.34.4
// names them (pkg/volume/csi getAttachmentName, reached through go:linkname because it is unexported),
// one JSON line per input line {"volumeHandle","driver","nodeName"}.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	_ "unsafe" // go:linkname

	_ "k8s.io/kubernetes/pkg/volume/csi" // links the package whose function is pulled below
)

//go:linkname getAttachmentName k8s.io/kubernetes/pkg/volume/csi.getAttachmentName
func getAttachmentName(volName, csiDriverName, nodeName string) string

type vector struct {
	VolumeHandle string `json:"volumeHandle"`
	Driver       string `json:"driver"`
	NodeName     string `json:"nodeName"`
	Name         string `json:"name,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var v vector
		if err := json.Unmarshal(in.Bytes(), &v); err != nil {
			panic(err)
		}
		v.Name = getAttachmentName(v.VolumeHandle, v.Driver, v.NodeName)
		if err := out.Encode(v); err != nil {
			panic(err)
		}
	}
}
