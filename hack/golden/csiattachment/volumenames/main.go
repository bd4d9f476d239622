// Command volumenames prints the unique volume names the attach/detach controller of k8s.io/kubernetes
// v1.34.4 gives volumes (volumeutil.GetUniqueVolumeNameFromSpec with the plugins of
// ProbeAttachableVolumePlugins: csi, fc, iscsi), one JSON line per input line {"pv"} or {"volume"}.
package main

import (
	"bufio"
	"encoding/json"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/csi"
	"k8s.io/kubernetes/pkg/volume/fc"
	"k8s.io/kubernetes/pkg/volume/iscsi"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
)

type vector struct {
	PV         *v1.PersistentVolume `json:"pv,omitempty"`
	Volume     *v1.Volume           `json:"volume,omitempty"`
	UniqueName string               `json:"uniqueName"`
	Error      bool                 `json:"error,omitempty"`
}

func main() {
	var plugins []volume.VolumePlugin
	plugins = append(plugins, csi.ProbeVolumePlugins()...)
	plugins = append(plugins, fc.ProbeVolumePlugins()...)
	plugins = append(plugins, iscsi.ProbeVolumePlugins()...)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
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
		var plugin volume.VolumePlugin
		for _, p := range plugins {
			if p.CanSupport(spec) {
				plugin = p
			}
		}
		name, err := volumeutil.GetUniqueVolumeNameFromSpec(plugin, spec)
		v.UniqueName, v.Error = string(name), err != nil
		if err := out.Encode(v); err != nil {
			panic(err)
		}
	}
}
