package schedule

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
)

// Plugins of other schedulers' builds (docs/design.md#pipeline): a
// KubeSchedulerConfiguration written for scheduler-plugins' kube-scheduler,
// or for a build with plugins of its own, names plugins kube-scheduler v1.37
// does not have. The pipeline runs kube-scheduler's plugins only; the
// others are taken out of the profile and either modelled elsewhere
// (Coscheduling: the coscheduling gang source's rules) or reported as not
// evaluated by every cycle in that profile, so no verdict that may depend
// on them is a plain yes.

// CoschedulingPlugin is scheduler-plugins' Coscheduling plugin, whose rules
// the coscheduling gang source applies (pkg/gang/source_coscheduling.go):
// PreFilter's sibling count and minResources (the source's gate), Permit's
// all or nothing (gang placement), its queue order (priority, then the
// PodGroup's creation time, then the name: Coscheduling.Less).
const CoschedulingPlugin = "Coscheduling"

// modelledOutOfTree words, per out-of-tree plugin this product models,
// where its rules are applied instead.
var modelledOutOfTree = map[string]string{
	CoschedulingPlugin: "the coscheduling gang source's rules",
}

// schedulerPluginsNames are the plugins scheduler-plugins v0.33.5's
// kube-scheduler registers (its cmd/scheduler/main.go), besides Coscheduling.
var schedulerPluginsNames = []string{
	"CapacityScheduling", "LoadVariationRiskBalancing", "NetworkOverhead", "TopologicalSort", "NodeResourcesAllocatable",
	"NodeResourceTopologyMatch", "PreemptionToleration", "TargetLoadPacking", "LowRiskOverCommitment", "SySched", "Peaks",
	"PodState", "QOSSort",
}

// OutOfTreePlugin is a plugin a profile enables that kube-scheduler v1.37
// does not have, with the extension points that enable it.
type OutOfTreePlugin struct {
	Name   string
	Points []string
	// Modelled says where its rules are applied instead; empty when
	// nothing models it: what it decides is not evaluated.
	Modelled string
}

// pointsThatDoNotDecide are the extension points whose plugins change
// nothing about where or whether a pod is scheduled.
var pointsThatDoNotDecide = []string{"postBind"}

// separateOutOfTree takes the plugins kube-scheduler v1.37 does not have
// out of every extension point's enabled list and returns them. A name that
// looks like a misspelt in-tree plugin is refused, as before: the user meant
// that plugin. When nothing is left to sort the queue (Coscheduling was the
// one queueSort plugin), PrioritySort takes its place: Coscheduling.Less
// orders by priority, then creation time, then name, as PrioritySort and
// gang placement's queue order do (the creation time being the PodGroup's).
func separateOutOfTree(p *configv1.Plugins, field string) ([]OutOfTreePlugin, error) {
	byName := map[string]*OutOfTreePlugin{}
	var out []OutOfTreePlugin
	var names []string
	points := extensionPointSets(p)
	for _, point := range slices.Sorted(maps.Keys(points)) {
		set := points[point]
		kept := set.Enabled[:0:0]
		for i, pl := range set.Enabled {
			if _, ok := registry[pl.Name]; ok {
				kept = append(kept, pl)
				continue
			}
			if want := misspeltInTree(pl.Name); want != "" {
				return nil, fmt.Errorf("%s.plugins.%s.enabled[%d]: unknown plugin %q (did you mean %q?)", field, point, i, pl.Name, want)
			}
			o := byName[pl.Name]
			if o == nil {
				o = &OutOfTreePlugin{Name: pl.Name, Modelled: modelledOutOfTree[pl.Name]}
				byName[pl.Name] = o
				names = append(names, pl.Name)
			}
			o.Points = append(o.Points, point)
		}
		set.Enabled = kept
	}
	if !hasQueueSort(p) {
		p.QueueSort.Enabled = append(p.QueueSort.Enabled, configv1.Plugin{Name: queuesort.Name})
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}

// hasQueueSort reports whether a queueSort plugin is left: PrioritySort
// (the only one kube-scheduler has) enabled at queueSort, or through
// multiPoint and not disabled at queueSort.
func hasQueueSort(p *configv1.Plugins) bool {
	named := func(set []configv1.Plugin, name string) bool {
		return slices.ContainsFunc(set, func(pl configv1.Plugin) bool { return pl.Name == name })
	}
	if named(p.QueueSort.Enabled, queuesort.Name) {
		return true
	}
	return named(p.MultiPoint.Enabled, queuesort.Name) && !named(p.QueueSort.Disabled, "*") && !named(p.QueueSort.Disabled, queuesort.Name)
}

// misspeltInTree returns the in-tree plugin name is a misspelling of (the
// same letters in another case, or at most two edits away), or "".
func misspeltInTree(name string) string {
	if modelledOutOfTree[name] != "" || slices.Contains(schedulerPluginsNames, name) {
		return ""
	}
	for _, in := range slices.Sorted(maps.Keys(registry)) {
		if strings.EqualFold(in, name) || editDistance(strings.ToLower(in), strings.ToLower(name)) <= 2 {
			return in
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// coschedulingArgs are scheduler-plugins' CoschedulingArgs
// (apis/config/v1), read strictly so a misspelt field is reported; the
// pipeline does not use them (the waiting time changes when, not whether).
type coschedulingArgs struct {
	PermitWaitingTimeSeconds *int64 `json:"permitWaitingTimeSeconds,omitempty"`
	PodGroupBackoffSeconds   *int64 `json:"podGroupBackoffSeconds,omitempty"`
}

// checkOutOfTreeArgs decodes the arguments of a plugin kube-scheduler
// does not have: Coscheduling's strictly and validated as
// ValidateCoschedulingArgs validates them; another known out-of-tree
// plugin's are not read; a misspelt in-tree plugin is refused.
func checkOutOfTreeArgs(plugin string, raw []byte) error {
	if plugin == CoschedulingPlugin {
		var args coschedulingArgs
		if len(raw) == 0 {
			return nil
		}
		if err := decodeStrict(raw, &args); err != nil {
			return err
		}
		var errs []error
		if v := args.PermitWaitingTimeSeconds; v != nil && *v < 0 {
			errs = append(errs, fmt.Errorf("permitWaitingTimeSeconds: Invalid value: %d: must be greater than 0", *v))
		}
		if v := args.PodGroupBackoffSeconds; v != nil && *v < 0 {
			errs = append(errs, fmt.Errorf("podGroupBackoffSeconds: Invalid value: %d: must be greater than 0", *v))
		}
		return errors.Join(errs...)
	}
	if want := misspeltInTree(plugin); want != "" {
		return fmt.Errorf("unknown plugin %q (did you mean %q?)", plugin, want)
	}
	return nil
}

// notEvaluatedOutOfTree words the out-of-tree plugins of a profile that
// nothing models and that may decide where or whether a pod goes: the
// not-evaluated reason of every cycle in that profile; "" when none.
func notEvaluatedOutOfTree(profile string, plugins []OutOfTreePlugin) string {
	var parts []string
	for _, o := range plugins {
		if o.Modelled != "" {
			continue
		}
		var points []string
		for _, pt := range o.Points {
			if !slices.Contains(pointsThatDoNotDecide, pt) {
				points = append(points, pt)
			}
		}
		if len(points) == 0 {
			continue
		}
		whose := "not a plugin of kube-scheduler v1.37 or scheduler-plugins v0.33.5"
		if slices.Contains(schedulerPluginsNames, o.Name) {
			whose = "scheduler-plugins'"
		}
		parts = append(parts, fmt.Sprintf("%s (%s; %s)", o.Name, strings.Join(points, ", "), whose))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("profile %q enables plugin(s) this build does not run, so what they decide is not evaluated: %s", profile, strings.Join(parts, "; "))
}
