package cmd

import (
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// completeVolcano reads --volcano-config: bad input is reported before
// the cluster is read, and the scheduler's ConfigMap is then not read
// (docs/design.md#volcanos-configuration).
func (o *GangVerbOptions) completeVolcano() error {
	path := o.Scheduler.VolcanoConfigFile
	if path == "" {
		return nil
	}
	if path == "-" && o.Snapshot.Path == "-" {
		return usageErrorf("--volcano-config - and --snapshot - cannot both read standard input")
	}
	c, err := snapshot.ReadVolcanoConfig(path, o.In)
	if err != nil {
		return usageErrorf("--volcano-config: %v", err)
	}
	o.Scheduler.volcano = c
	o.Snapshot.SkipVolcanoConfig = true
	return nil
}

// applyVolcanoConfig puts --volcano-config in snap: it wins over the
// configuration the snapshot carries, and over why that could not be read.
func (o *GangVerbOptions) applyVolcanoConfig(snap *schedule.Snapshot) {
	if c := o.Scheduler.volcano; c != nil {
		volcano.SetConfig(snap, c)
	}
}

// volcanoConfiguration names, for a Volcano gang, the configuration of
// Volcano's scheduler it is judged with; nil for any other gang (or none).
// When the configuration could not be read, a warning says why.
func (o *GangVerbOptions) volcanoConfiguration(snap *schedule.Snapshot, g *gang.Gang) *v1alpha1.VolcanoConfiguration {
	if g == nil || g.Source != volcano.Source {
		return nil
	}
	cfg, unread := volcano.ConfigOf(snap)
	if unread != "" {
		o.warn([]string{unread})
		return &v1alpha1.VolcanoConfiguration{Unread: unread}
	}
	return &v1alpha1.VolcanoConfiguration{Source: cfg.Source}
}

// volcanoLine is the line describe prints of v (describe.Options.Configuration):
// the source, or that it is unknown; "" for none.
func volcanoLine(v *v1alpha1.VolcanoConfiguration) string {
	switch {
	case v == nil:
		return ""
	case v.Unread != "":
		return "Volcano configuration: unknown (not evaluated): " + v.Unread
	}
	return "Volcano configuration: " + v.Source
}

// volcanoPlaceOptions are a Volcano gang's placement options
// (SchedulerFlags.volcanoPlaceOptions), for every verb: the output names the
// configuration once (Volcano configuration: ...); the node order it gives
// is for -v.
func (o *GangVerbOptions) volcanoPlaceOptions(snap *schedule.Snapshot, g *gang.Gang) (gang.PlaceOptions, bool) {
	opts, note, ok := o.Scheduler.volcanoPlaceOptions(snap, g.Source)
	if ok {
		klog.V(1).Info(note)
	}
	return opts, ok
}
