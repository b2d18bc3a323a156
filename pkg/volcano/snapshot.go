package volcano

import "maps"

// Group is Volcano's scheduling API group: its PodGroups and Queues are
// served at v1beta1.
const Group = "scheduling.volcano.sh"

// SystemsKey is where a snapshot holds the configuration Volcano's
// scheduler runs with (schedule.Snapshot.Systems, which pkg/schedule does
// not read): a *SchedulerConfig.
const SystemsKey = "volcano.sh/scheduler-configuration"

// SchedulerConfig is the configuration Volcano's scheduler runs with as a
// snapshot knows it (--volcano-config, else the scheduler's ConfigMap a
// read found; docs/design.md#volcano). Unread, when set, says why the live
// read could not read the ConfigMap (no permission), or why what it holds
// is not what Volcano runs (a configuration Volcano would not load,
// docs/design.md#volcanos-configuration): the configuration is then
// unknown, and no Volcano verdict is a plain yes.
type SchedulerConfig struct {
	// Config is nil for Volcano's default configuration.
	Config *Config
	Unread string
}

// ConfigIn is the configuration a snapshot's systems hold: the one set,
// else Volcano's default; and why it could not be read, "" when it was.
func ConfigIn(systems map[string]any) (*Config, string) {
	sc, _ := systems[SystemsKey].(*SchedulerConfig)
	if sc == nil {
		return Default(), ""
	}
	if sc.Config == nil {
		return Default(), sc.Unread
	}
	return sc.Config, sc.Unread
}

// SetConfigIn sets the configuration in a snapshot's systems, on a new
// map: snapshots that share the old one keep theirs.
func SetConfigIn(systems *map[string]any, c *Config, unread string) {
	m := maps.Clone(*systems)
	if m == nil {
		m = map[string]any{}
	}
	m[SystemsKey] = &SchedulerConfig{Config: c, Unread: unread}
	*systems = m
}
