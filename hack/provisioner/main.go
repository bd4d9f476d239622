// Command provisioner is a small external provisioner for qkcm's tests: it provisions a claim of a
// StorageClass whose provisioner is its --provisioner-name with a hostPath PersistentVolume (a
// directory under --base-dir), and deletes that directory when the PV is released with the Delete
// policy. It is built on sig-storage-lib-external-provisioner, which acts only on claims that
// kube-controller-manager's PV binder handed over (volume.kubernetes.io/storage-provisioner), and
// writes pv.kubernetes.io/provisioned-by on the PVs it creates.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

type hostPathProvisioner struct {
	baseDir string
}

func (p *hostPathProvisioner) Provision(_ context.Context, options controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	if options.PVC.Spec.Selector != nil {
		return nil, controller.ProvisioningFinished, errors.New("claim.Spec.Selector is not supported")
	}
	dir := filepath.Join(p.baseDir, options.PVName)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("creating %s: %w", dir, err)
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if options.StorageClass.ReclaimPolicy != nil {
		reclaim = *options.StorageClass.ReclaimPolicy
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: options.PVName},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   options.PVC.Spec.AccessModes,
			MountOptions:                  options.StorageClass.MountOptions,
			VolumeMode:                    options.PVC.Spec.VolumeMode,
			Capacity: v1.ResourceList{
				v1.ResourceStorage: options.PVC.Spec.Resources.Requests[v1.ResourceStorage],
			},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: dir},
			},
		},
	}
	if options.SelectedNodeName != "" {
		// the volume lives on the node the scheduler chose
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{options.SelectedNodeName},
			}}}},
		}}
	}
	return pv, controller.ProvisioningFinished, nil
}

func (p *hostPathProvisioner) Delete(_ context.Context, volume *v1.PersistentVolume) error {
	if volume.Spec.HostPath == nil {
		return errors.New("not a hostPath volume")
	}
	return os.RemoveAll(volume.Spec.HostPath.Path)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	name := flag.String("provisioner-name", "qkcm.io/hostpath", "the StorageClass provisioner this provisioner serves")
	baseDir := flag.String("base-dir", filepath.Join(os.TempDir(), "qkcm-hostpath"), "where volumes' directories are made")
	klog.InitFlags(nil)
	flag.Parse()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Fatalf("client: %v", err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	pc := controller.NewProvisionController(ctx, client, *name, &hostPathProvisioner{baseDir: *baseDir},
		controller.LeaderElection(false))
	klog.Infof("provisioner %s started", *name)
	pc.Run(ctx)
}
