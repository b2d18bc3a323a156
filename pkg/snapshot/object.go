package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// NotServedError says the API server does not serve a resource at the
// version asked for: its CRD is not installed, or serves other versions.
type NotServedError struct {
	Resource schema.GroupVersionResource
	// Versions are the versions of the resource's group the server does
	// serve it at; empty when it serves the resource at none.
	Versions []string
}

func (e *NotServedError) Error() string {
	if len(e.Versions) == 0 {
		return fmt.Sprintf("the server does not serve %s.%s", e.Resource.Resource, e.Resource.Group)
	}
	return fmt.Sprintf("the server serves %s.%s at %v, not at %s", e.Resource.Resource, e.Resource.Group, e.Versions, e.Resource.Version)
}

// GetObject reads one object from the cluster through the dynamic client,
// at gvr's version. An object that does not exist is the API's NotFound
// error; a resource the server does not serve (no such resource in
// discovery, a GET answered 404 for the resource type) is a
// *NotServedError; a server that cannot be reached, a
// *ServerUnreachableError.
func GetObject(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	// As for the snapshot's own reads: deprecation warnings would be about
	// the version this build reads, not about anything the user did.
	dynCfg := rest.CopyConfig(cfg)
	dynCfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(dynCfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	obj, err := dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return obj, nil
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return nil, &ServerUnreachableError{Host: cfg.Host, Err: urlErr.Err}
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	// A 404 is a missing object or a missing resource: discovery tells.
	dc, derr := discovery.NewDiscoveryClientForConfig(dynCfg)
	if derr != nil {
		return nil, fmt.Errorf("creating a client: %w", derr)
	}
	served, derr := servesResource(dc, gvr)
	if derr != nil {
		return nil, derr
	}
	if !served {
		return nil, &NotServedError{Resource: gvr, Versions: servedVersions(dc, gvr)}
	}
	return nil, err
}

// servesResource says whether discovery lists gvr.
func servesResource(dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", gvr.GroupVersion(), err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }), nil
}

// servedVersions lists the other versions of gvr's group that serve its
// resource, best effort (for the message only).
func servedVersions(dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource) []string {
	groups, err := dc.ServerGroups()
	if err != nil {
		return nil
	}
	var out []string
	for _, g := range groups.Groups {
		if g.Name != gvr.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gvr.Version {
				continue
			}
			other := gvr
			other.Version = v.Version
			if ok, _ := servesResource(dc, other); ok {
				out = append(out, v.Version)
			}
		}
	}
	return out
}

// ObjectNames lists the names of gvr's objects in namespace, metadata only,
// for shell completion; a resource the server does not serve has none.
func ObjectNames(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) ([]string, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	list, err := mc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i, item := range list.Items {
		names[i] = item.Name
	}
	return names, nil
}
