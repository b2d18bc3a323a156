package cmd

import (
	"errors"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// SchedulerFlags choose the scheduling profile and the topology a gang is
// confined to.
type SchedulerFlags struct {
	ConfigFile        string
	Profile           string
	TopologyKey       string
	PreferTopologyKey string
	profile           *schedule.Profile
}

// AddFlags adds --scheduler-config, --profile, --topology-key and --prefer-topology-key.
func (f *SchedulerFlags) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&f.ConfigFile, "scheduler-config", f.ConfigFile, "A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file, such as your kube-scheduler's; its profile is merged onto v1.37's defaults as kube-scheduler does.")
	flags.StringVar(&f.Profile, "profile", f.Profile, "The profile (schedulerName) to use from --scheduler-config; default: the pod's schedulerName, else the first profile.")
	flags.StringVar(&f.TopologyKey, "topology-key", f.TopologyKey, "Confine the whole gang to one value of this node label (for example topology.kubernetes.io/zone).")
	flags.StringVar(&f.PreferTopologyKey, "prefer-topology-key", f.PreferTopologyKey, "Try to keep the gang within one value of this node label, else place it anywhere.")
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
	case f.ConfigFile != "":
		f.profile, err = schedule.LoadProfile(f.ConfigFile, f.Profile)
	case f.Profile != "" && f.Profile != schedule.DefaultSchedulerName:
		return usageErrorf("--profile %q needs --scheduler-config: the built-in configuration has only %q", f.Profile, schedule.DefaultSchedulerName)
	default:
		f.profile, err = schedule.DefaultProfile()
	}
	if err == nil {
		// Instantiate the profile once on an empty cluster, so bad plugin
		// arguments are reported now, as bad input.
		_, err = schedule.NewScheduler(&schedule.Snapshot{}, schedule.Options{Profile: f.profile})
	}
	var cfgErr *schedule.ConfigError
	if errors.As(err, &cfgErr) {
		return usageErrorf("scheduler config %v", err)
	}
	return err
}

// placeOptions are the gang placement options the flags give.
func (f *SchedulerFlags) placeOptions() gang.PlaceOptions {
	return gang.PlaceOptions{Profile: f.profile, TopologyKey: f.TopologyKey, PreferredTopologyKey: f.PreferTopologyKey}
}

// SchedulingProfile returns the loaded profile.
func (f *SchedulerFlags) SchedulingProfile() *schedule.Profile { return f.profile }
