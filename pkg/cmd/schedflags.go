package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
	volcanomodel "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// SchedulerFlags choose the scheduling profile and the topology a gang is
// confined to.
type SchedulerFlags struct {
	ConfigFile        string
	Profile           string
	TopologyKey       string
	PreferTopologyKey string
	// VolcanoConfigFile is --volcano-config: Volcano's scheduler
	// configuration for Volcano gangs, a file or "-" (stdin).
	VolcanoConfigFile string
	// volcano is that configuration, read by GangVerbOptions.completeVolcano.
	volcano *volcanomodel.Config
	// profiles are the candidate profiles: the one --profile names, else
	// every profile of --scheduler-config, else the default profile.
	profiles []*schedule.Profile
}

// AddFlags adds --scheduler-config, --profile, --topology-key and --prefer-topology-key.
func (f *SchedulerFlags) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&f.ConfigFile, "scheduler-config", f.ConfigFile, "A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file, such as your kube-scheduler's; its profile is merged onto v1.37's defaults as kube-scheduler does.")
	flags.StringVar(&f.Profile, "profile", f.Profile, "The profile (schedulerName) to use from --scheduler-config; default: the profile named after the pods' spec.schedulerName, as kube-scheduler picks it, else the first profile.")
	flags.StringVar(&f.TopologyKey, "topology-key", f.TopologyKey, "Confine the whole gang to one value of this node label (for example topology.kubernetes.io/zone).")
	flags.StringVar(&f.PreferTopologyKey, "prefer-topology-key", f.PreferTopologyKey, "Try to keep the gang within one value of this node label, else place it anywhere.")
	flags.StringVar(&f.VolcanoConfigFile, "volcano-config", f.VolcanoConfigFile, "Volcano's scheduler configuration to judge Volcano gangs with: a volcano-scheduler.conf, or its ConfigMap as kubectl get -o yaml prints it, or - for stdin; default: the scheduler's ConfigMap (--volcano-config-map), else Volcano's default configuration.")
}

// Complete loads the profile: a bad file is bad input (exit code 2).
func (f *SchedulerFlags) Complete() error {
	for _, k := range []struct{ flag, key string }{{"--topology-key", f.TopologyKey}, {"--prefer-topology-key", f.PreferTopologyKey}} {
		if k.key == "" {
			continue
		}
		if errs := validation.IsQualifiedName(k.key); len(errs) > 0 {
			return usageErrorf("invalid %s %q: %s", k.flag, k.key, errs[0])
		}
	}
	if f.TopologyKey != "" && f.PreferTopologyKey != "" {
		return usageErrorf("--topology-key and --prefer-topology-key cannot be combined")
	}
	var err error
	switch {
	case f.ConfigFile != "" && f.Profile != "":
		var p *schedule.Profile
		if p, err = schedule.LoadProfile(f.ConfigFile, f.Profile); err == nil {
			f.profiles = []*schedule.Profile{p}
		}
	case f.ConfigFile != "":
		f.profiles, err = schedule.LoadProfiles(f.ConfigFile)
	case f.Profile != "" && f.Profile != schedule.DefaultSchedulerName:
		return usageErrorf("--profile %q needs --scheduler-config: the built-in configuration has only %q", f.Profile, schedule.DefaultSchedulerName)
	default:
		var p *schedule.Profile
		if p, err = schedule.DefaultProfile(); err == nil {
			f.profiles = []*schedule.Profile{p}
		}
	}
	for _, p := range f.profiles {
		if err != nil {
			break
		}
		// Instantiate each profile once on an empty cluster, so bad plugin
		// arguments are reported now, as bad input.
		_, err = schedule.NewScheduler(&schedule.Snapshot{}, schedule.Options{Profile: p})
	}
	var cfgErr *schedule.ConfigError
	if errors.As(err, &cfgErr) {
		return usageErrorf("scheduler config %v", err)
	}
	return err
}

// volcanoPlaceOptions are the placement options for a Volcano gang when the
// user chose no profile (no --scheduler-config, no --profile): Volcano's
// node choice under the scheduler's configuration (volcano.ConfigOf), and
// the line that says so; ok is false for other gangs. Where the live read
// could not read the configuration, every cycle reports the node order as
// not evaluated: no plain yes rests on a guess of it.
func (f *SchedulerFlags) volcanoPlaceOptions(snap *schedule.Snapshot, source gang.Source) (opts gang.PlaceOptions, note string, ok bool) {
	if source != volcano.Source || f.ConfigFile != "" || f.Profile != "" {
		return gang.PlaceOptions{}, "", false
	}
	cfg, unread := volcano.ConfigOf(snap)
	p := volcano.Profile(cfg)
	from := cfg.Source
	if unread != "" {
		p = p.WithNotEvaluated("Volcano's node order: its configuration could not be read (" + unread + "); Volcano's default stands in")
		from = fmt.Sprintf("%s, standing in for the configuration that could not be read (%s)", cfg.Source, unread)
	}
	opts = gang.PlaceOptions{Profile: p, TopologyKey: f.TopologyKey, PreferredTopologyKey: f.PreferTopologyKey}
	note = fmt.Sprintf("Volcano gang: nodes filtered and ordered as Volcano's allocate does under %s: %s (--scheduler-config or --profile places it with a kube-scheduler profile)",
		from, p.NodeOrder().Describe())
	return opts, note, true
}

// placeOptions are the gang placement options the flags give for pods: the
// profile is the one --profile names, else the one named after the
// schedulerName of the first pending pod (kube-scheduler runs a pod in the
// profile of its schedulerName), else the first. When no profile has that
// name the pods are not placed silently with another: a warning says which
// profile stands in and why (kube-scheduler run with this configuration
// would leave them to another scheduler; with none serving that name, they
// stay Pending).
//
// When snap is given and nothing in it shows a scheduler serving that name
// (no pod on a node names it, and it is not Volcano's on a cluster that
// serves Volcano), every cycle reports the pods as not placed by anyone:
// a fit that will not start is no plain yes (issue #27).
func (f *SchedulerFlags) placeOptions(snap *schedule.Snapshot, pods []*corev1.Pod) (gang.PlaceOptions, []string) {
	opts, warnings, standIn := f.profileFor(pods)
	if standIn != "" && snap != nil && !servedName(snap, standIn) {
		opts.Profile = opts.Profile.WithNotEvaluated(fmt.Sprintf("no scheduler is known to serve schedulerName %q: no profile names it and no pod on a node of the snapshot was scheduled by it, so the pods stay Pending unless a scheduler of that name runs (a misspelt schedulerName?)", standIn))
	}
	return opts, warnings
}

// bindPlaceOptions are the placement options of bind, which is the
// scheduler of the pods it binds (docs/design.md#binding-a-gang): the
// profile is chosen as placeOptions chooses it, but a schedulerName no
// profile names is no reason to doubt the plan (the usual way to hand a
// gang to an external binder is a name no running scheduler watches), so
// the stand-in is said in a note, not a warning, and the plan is not
// marked unevaluated. A warning says when the snapshot shows another
// scheduler serving that name: it would race bind for the same room
// (the check after the commit reports a node it fills).
func (f *SchedulerFlags) bindPlaceOptions(snap *schedule.Snapshot, pods []*corev1.Pod) (opts gang.PlaceOptions, note string, warnings []string) {
	opts, _, standIn := f.profileFor(pods)
	if standIn == "" {
		return opts, "", nil
	}
	note = fmt.Sprintf("no profile of %s is named after the pods' schedulerName %q: bind is their scheduler and places them with profile %q (--profile chooses another)",
		f.configName(), standIn, opts.Profile.Name)
	if by := servedBy(snap, standIn, true); by != "" {
		warnings = []string{fmt.Sprintf("another scheduler may serve schedulerName %q (%s): it would race this bind for the same room; the check after the commit reports a node it fills", standIn, by)}
	}
	return opts, note, warnings
}

// servedName reports whether the snapshot shows a scheduler serving
// name: a pod on a node names it (it was bound by that scheduler, or bound
// by hand), or it is "volcano" on a cluster that serves Volcano.
func servedName(snap *schedule.Snapshot, name string) bool {
	return servedBy(snap, name, false) != ""
}

// servedBy says what in the snapshot shows a scheduler serving name ("" when
// nothing does): a pod on a node that names it, or Volcano's objects for
// "volcano". notOurs leaves out the pods bind bound (bind.BoundByAnnotation):
// they show that bind serves the name, not another scheduler.
func servedBy(snap *schedule.Snapshot, name string, notOurs bool) string {
	if snap == nil {
		return ""
	}
	if name == volcano.SchedulerName && (len(snap.ObjectsOf(volcano.Group, "Queue")) > 0 || slices.ContainsFunc(snap.PodGroups, func(u *unstructured.Unstructured) bool {
		return u.GroupVersionKind().Group == volcano.Group
	})) {
		return "the cluster serves Volcano: it has Volcano's Queues or PodGroups"
	}
	for _, list := range [][]*corev1.Pod{snap.Pods, snap.SucceededPods} {
		for _, pod := range list {
			if pod.Spec.NodeName == "" || cmp.Or(pod.Spec.SchedulerName, corev1.DefaultSchedulerName) != name {
				continue
			}
			if notOurs && pod.Annotations[bind.BoundByAnnotation] != "" {
				continue
			}
			return fmt.Sprintf("pod %s/%s on node %s names it and was not bound by kubectl-gang", pod.Namespace, pod.Name, pod.Spec.NodeName)
		}
	}
	return ""
}

// configName names the scheduler configuration the profiles come from.
func (f *SchedulerFlags) configName() string {
	if f.ConfigFile != "" {
		return f.ConfigFile
	}
	return "the built-in configuration (kube-scheduler's default profile)"
}

// profileFor picks the profile for pods (placeOptions); standIn is the
// schedulerName no profile serves when another stands in for it.
func (f *SchedulerFlags) profileFor(pods []*corev1.Pod) (opts gang.PlaceOptions, warnings []string, standIn string) {
	opts = gang.PlaceOptions{Profile: f.profiles[0], TopologyKey: f.TopologyKey, PreferredTopologyKey: f.PreferTopologyKey}
	if f.Profile != "" {
		// The user chose the profile.
		return opts, nil, ""
	}
	name := ""
	for _, pod := range pods {
		if name == "" || pod.Spec.NodeName == "" {
			name = cmp.Or(pod.Spec.SchedulerName, corev1.DefaultSchedulerName)
		}
		if pod.Spec.NodeName == "" {
			break
		}
	}
	// No pods (nothing to place): the default scheduler's profile.
	name = cmp.Or(name, corev1.DefaultSchedulerName)
	var names []string
	for _, p := range f.profiles {
		if p.Name == name {
			opts.Profile = p
			return opts, nil, ""
		}
		names = append(names, strconv.Quote(p.Name))
	}
	return opts, []string{fmt.Sprintf("the pods' schedulerName is %q, which no profile of %s names (it has %s): kube-scheduler run with it leaves them to another scheduler, and they stay Pending if none serves that name; placed with profile %q as a stand-in for that scheduler (--profile chooses another)",
		name, f.configName(), strings.Join(names, ", "), opts.Profile.Name)}, name
}
