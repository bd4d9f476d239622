// Command volumemigration prints how the attach/detach controller of k8s.io/kubernetes v1.34.4 migrates an
// in-tree PV or pod inline volume to CSI: the spec csimigration.TranslateInTreeSpecToCSI makes with
// k8s.io/csi-translation-lib v0.34.4, its unique volume name (the CSI plugin's GetUniqueVolumeNameFromSpec)
// and the VolumeAttachment name the CSI attacher gives it on node "node-1"; one JSON line per input line
// {"pv"} or {"volume","podNamespace"}.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/csi"
	"k8s.io/kubernetes/pkg/volume/csimigration"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
)

//go:linkname getAttachmentName k8s.io/kubernetes/pkg/volume/csi.getAttachmentName
func getAttachmentName(volName, csiDriverName, nodeName string) string

type vector struct {
	PV             *v1.PersistentVolume `json:"pv,omitempty"`
	Volume         *v1.Volume           `json:"volume,omitempty"`
	PodNamespace   string               `json:"podNamespace,omitempty"`
	InTreePlugin   string               `json:"inTreePlugin"`
	Translated     *v1.PersistentVolume `json:"translated,omitempty"`
	Inline         bool                 `json:"inline,omitempty"`
	UniqueName     string               `json:"uniqueName,omitempty"`
	AttachmentName string               `json:"attachmentName,omitempty"`
	Error          bool                 `json:"error,omitempty"`
}

func main() {
	translator := csitrans.New()
	plugin := csi.ProbeVolumePlugins()[0]
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	logger := klog.Background()
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var v vector
		if err := json.Unmarshal(in.Bytes(), &v); err != nil {
			panic(err)
		}
		var spec *volume.Spec
		if v.PV != nil {
			spec = volume.NewSpecFromPersistentVolume(v.PV, false)
		} else {
			spec = volume.NewSpecFromVolume(v.Volume)
		}
		v.InTreePlugin, _ = translator.GetInTreePluginNameFromSpec(spec.PersistentVolume, spec.Volume)
		translated, err := csimigration.TranslateInTreeSpecToCSI(logger, spec, v.PodNamespace, translator)
		if err != nil {
			v.Error = true
		} else {
			v.Translated, v.Inline = translated.PersistentVolume, translated.InlineVolumeSpecForCSIMigration
			name, err := volumeutil.GetUniqueVolumeNameFromSpec(plugin, translated)
			if err != nil {
				panic(err)
			}
			v.UniqueName = string(name)
			src := translated.PersistentVolume.Spec.CSI
			v.AttachmentName = getAttachmentName(src.VolumeHandle, src.Driver, "node-1")
		}
		if err := out.Encode(v); err != nil {
			panic(err)
		}
	}
}
