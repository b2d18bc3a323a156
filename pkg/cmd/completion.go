package cmd

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// completeSubject completes a verb's argument: the resource prefixes first
// (pod/ where allowed, podgroup/ and the fully qualified podgroups.<group>/,
// the workloads' jobset/, ... where allowed), then the names in the
// namespace, read from --snapshot when it names a file or directory, else
// from the cluster (metadata only; a snapshot holds no workloads).
// Completion never prints errors and gives up after five seconds.
func completeSubject(f *SnapshotFlags, allowPod, allowWorkload bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		prefixes := []string{"podgroup/"}
		if allowPod {
			prefixes = append([]string{"pod/"}, prefixes...)
		}
		for _, g := range gang.PodGroupGroups() {
			prefixes = append(prefixes, "podgroups."+g+"/")
		}
		if allowWorkload {
			for _, k := range workload.Kinds {
				prefixes = append(prefixes, k.Names[0]+"/")
			}
		}
		prefix, _, found := strings.Cut(toComplete, "/")
		if !found {
			return prefixes, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
		defer cancel()
		resource, group := "podgroups", ""
		var names []string
		var first map[string]bool
		switch typ, qualifier, _ := strings.Cut(strings.ToLower(prefix), "."); {
		case prefix == "pod" && allowPod:
			resource = "pods"
		case prefix == "podgroup":
		case strings.HasPrefix(prefix, "podgroups.") && slices.Contains(gang.PodGroupGroups(), strings.TrimPrefix(prefix, "podgroups.")):
			group = strings.TrimPrefix(prefix, "podgroups.")
		default:
			k, ok := workloadKind(typ)
			if !allowWorkload || !ok || (qualifier != "" && qualifier != k.Resource.Group) {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			resource = ""
			names = f.workloadNames(ctx, k)
		}
		if resource != "" {
			names, first = f.subjectNames(ctx, resource, group)
		}
		// Pods that wait for a node come first: they are what one explains.
		var out, rest []string
		for _, name := range names {
			if c := prefix + "/" + name; strings.HasPrefix(c, toComplete) {
				if first[name] {
					out = append(out, c)
				} else {
					rest = append(rest, c)
				}
			}
		}
		slices.Sort(out)
		slices.Sort(rest)
		return append(slices.Compact(out), slices.Compact(rest)...), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeFormats completes -o with the formats a verb prints.
func completeFormats(formats []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	}
}

// workloadNames lists the names of a workload kind's objects in the
// namespace the flags pick, from the cluster: a snapshot holds none.
func (f *SnapshotFlags) workloadNames(ctx context.Context, k workload.Kind) []string {
	namespace, err := f.Namespace()
	if err != nil || f.Offline() {
		return nil
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil
	}
	cfg.Timeout = 5 * time.Second
	names, _ := snapshot.ObjectNames(ctx, cfg, k.Resource, namespace)
	return names
}

// subjectNames lists pod or PodGroup names in the namespace the flags
// pick; first are the pods no node holds yet.
func (f *SnapshotFlags) subjectNames(ctx context.Context, resource, group string) (names []string, first map[string]bool) {
	namespace, err := f.Namespace()
	if err != nil {
		return nil, nil
	}
	first = map[string]bool{}
	if f.Offline() {
		if f.Path == "-" {
			return nil, nil
		}
		snap, _, err := snapshot.LoadFiles(f.Path, nil)
		if err != nil {
			return nil, nil
		}
		if resource == "pods" {
			for _, p := range snap.Pods {
				if p.Namespace == namespace {
					names = append(names, p.Name)
					first[p.Name] = p.Spec.NodeName == ""
				}
			}
			return names, first
		}
		for _, pg := range snap.PodGroups {
			if pg.GetNamespace() == namespace && (group == "" || pg.GroupVersionKind().Group == group) {
				names = append(names, pg.GetName())
			}
		}
		return names, first
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, nil
	}
	cfg.Timeout = 5 * time.Second
	names, _ = snapshot.Names(ctx, cfg, namespace, resource, group)
	if resource == "pods" {
		unbound, _ := snapshot.UnboundPodNames(ctx, cfg, namespace)
		for _, n := range unbound {
			first[n] = true
		}
	}
	return names, first
}
