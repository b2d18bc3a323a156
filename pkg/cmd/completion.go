package cmd

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
)

// completeSubject completes a verb's argument: the resource prefixes first
// (pod/ where allowed, podgroup/ and the fully qualified podgroups.<group>/),
// then the names in the namespace, read from --snapshot when it names a file
// or directory, else from the cluster (metadata only). Completion never
// prints errors and gives up after five seconds.
func completeSubject(f *SnapshotFlags, allowPod bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		prefixes := []string{"podgroup/"}
		if allowPod {
			prefixes = append([]string{"pod/"}, prefixes...)
		}
		for _, g := range podGroupGroups {
			prefixes = append(prefixes, "podgroups."+g+"/")
		}
		prefix, _, found := strings.Cut(toComplete, "/")
		if !found {
			return prefixes, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		resource, group := "podgroups", ""
		switch {
		case prefix == "pod" && allowPod:
			resource = "pods"
		case prefix == "podgroup":
		case strings.HasPrefix(prefix, "podgroups.") && slices.Contains(podGroupGroups, strings.TrimPrefix(prefix, "podgroups.")):
			group = strings.TrimPrefix(prefix, "podgroups.")
		default:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
		defer cancel()
		var out []string
		for _, name := range f.subjectNames(ctx, resource, group) {
			if c := prefix + "/" + name; strings.HasPrefix(c, toComplete) {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return slices.Compact(out), cobra.ShellCompDirectiveNoFileComp
	}
}

// subjectNames lists pod or PodGroup names in the namespace the flags pick.
func (f *SnapshotFlags) subjectNames(ctx context.Context, resource, group string) []string {
	namespace, err := f.Namespace()
	if err != nil {
		return nil
	}
	if f.Offline() {
		if f.Path == "-" {
			return nil
		}
		snap, _, err := snapshot.LoadFiles(f.Path, nil)
		if err != nil {
			return nil
		}
		var names []string
		if resource == "pods" {
			for _, p := range snap.Pods {
				if p.Namespace == namespace {
					names = append(names, p.Name)
				}
			}
			return names
		}
		for _, pg := range snap.PodGroups {
			if pg.GetNamespace() == namespace && (group == "" || pg.GroupVersionKind().Group == group) {
				names = append(names, pg.GetName())
			}
		}
		return names
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil
	}
	cfg.Timeout = 5 * time.Second
	names, _ := snapshot.Names(ctx, cfg, namespace, resource, group)
	return names
}
