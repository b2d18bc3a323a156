package snapshot

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Names lists the names of the namespaces (resource "namespaces"; namespace
// is ignored), of the pods (resource "pods") or of the PodGroups (resource
// "podgroups", of every kind the server serves, or only group's when group
// is set) in namespace, for shell completion. Only metadata is read.
func Names(ctx context.Context, cfg *rest.Config, namespace, resource, group string) ([]string, error) {
	return names(ctx, cfg, namespace, resource, group, "")
}

// UnboundPodNames lists the names of the pods in namespace that no node
// holds yet (the field selector spec.nodeName=, filtered by the server),
// metadata only: what explain completes first.
func UnboundPodNames(ctx context.Context, cfg *rest.Config, namespace string) ([]string, error) {
	return names(ctx, cfg, namespace, "pods", "", "spec.nodeName=")
}

func names(ctx context.Context, cfg *rest.Config, namespace, resource, group, fieldSelector string) ([]string, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var gvrs []schema.GroupVersionResource
	switch resource {
	case "namespaces":
		namespace = metav1.NamespaceNone
		gvrs = append(gvrs, schema.GroupVersionResource{Version: "v1", Resource: resource})
	case "pods":
		gvrs = append(gvrs, schema.GroupVersionResource{Version: "v1", Resource: resource})
	default:
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		kinds, _, err := discoverKinds(dc, cfg.Host)
		if err != nil {
			return nil, err
		}
		for _, gvr := range kinds.custom {
			if gvr.Resource == resource && (group == "" || gvr.Group == group) {
				gvrs = append(gvrs, gvr)
			}
		}
	}
	var names []string
	for _, gvr := range gvrs {
		list, err := mc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{FieldSelector: fieldSelector})
		if err != nil {
			continue
		}
		for _, item := range list.Items {
			names = append(names, item.Name)
		}
	}
	return names, nil
}
