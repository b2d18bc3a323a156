package testbed

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// CRDs holds our own CustomResourceDefinition manifests (crds/*.yaml):
// Volcano's podgroups and queues (scheduling.volcano.sh/v1beta1) and the
// coscheduling plugin's podgroups (scheduling.x-k8s.io/v1alpha1). They are
// minimal structural schemas that preserve unknown fields in spec and status,
// with the status subresource on.
//
//go:embed crds/*.yaml
var CRDs embed.FS

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDObjects returns the manifests in CRDs, parsed, in file name order.
func CRDObjects() ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(CRDs, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		data, err := CRDs.ReadFile(name)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// InstallCRDs creates the CRDs (leaving any that already exist alone) and
// waits until each is Established and its resource shows in discovery.
//
// Note that kube-apiserver delays each create of a custom resource by 2s
// while its CRD was Established less than 2s ago; Start waits that out.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	_, err := installCRDs(ctx, cfg)
	return err
}

// installCRDs is InstallCRDs, returning when the latest CRD became Established
// (by its condition, which has second precision).
func installCRDs(ctx context.Context, cfg *rest.Config) (time.Time, error) {
	objs, err := CRDObjects()
	if err != nil {
		return time.Time{}, err
	}
	if err := createCRDs(ctx, cfg, objs); err != nil {
		return time.Time{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return time.Time{}, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return time.Time{}, err
	}
	crds := dyn.Resource(crdGVR)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var established time.Time
	for _, obj := range objs {
		at, err := waitCRD(ctx, crds, disc, obj)
		if err != nil {
			return time.Time{}, err
		}
		if at.After(established) {
			established = at
		}
	}
	return established, nil
}

func createCRDs(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := dyn.Resource(crdGVR)
	for _, obj := range objs {
		if _, err := crds.Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// waitCRD waits until the CRD is Established and served, and returns the
// time of its Established condition.
func waitCRD(ctx context.Context, crds dynamic.NamespaceableResourceInterface, disc discovery.DiscoveryInterface, want *unstructured.Unstructured) (time.Time, error) {
	group, _, _ := unstructured.NestedString(want.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(want.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(want.Object, "spec", "versions")
	var served []string
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if ok, _ := m["served"].(bool); ok {
			name, _ := m["name"].(string)
			served = append(served, name)
		}
	}
	for {
		established, why := crdNotReady(ctx, crds, disc, want.GetName(), group, plural, served)
		if why == "" {
			return established, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("CRD %s not ready: %s", want.GetName(), why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// crdNotReady says why the CRD is not yet usable, or "" when it is, and then
// when it became Established.
func crdNotReady(ctx context.Context, crds dynamic.NamespaceableResourceInterface, disc discovery.DiscoveryInterface, name, group, plural string, served []string) (time.Time, string) {
	got, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	status := map[string]string{}
	var established time.Time
	for _, c := range conds {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		status[t] = s
		if ts, _ := m["lastTransitionTime"].(string); t == "Established" {
			established, _ = time.Parse(time.RFC3339, ts)
		}
	}
	if status["Established"] != "True" || status["NamesAccepted"] != "True" {
		return time.Time{}, fmt.Sprintf("conditions %v", status)
	}
	for _, v := range served {
		list, err := disc.ServerResourcesForGroupVersion(group + "/" + v)
		if err != nil {
			return time.Time{}, fmt.Sprintf("discovery of %s/%s: %v", group, v, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == plural {
				found = true
			}
		}
		if !found {
			return time.Time{}, fmt.Sprintf("%s not in discovery of %s/%s", plural, group, v)
		}
	}
	return established, ""
}
