package cmd

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
)

// Client rate limits for one-shot use. A snapshot is a burst of LISTs and a
// bind a burst of Bindings, far beyond client-go's 5 QPS default, and
// every API server since v1.29 guards itself with API Priority and
// Fairness, which queues what it can take and refuses the rest with 429
// (bind retries those). So by default the client sets no rate of its own
// (--qps 0); each verb bounds the requests it has in flight instead.
const (
	defaultQPS   = 0
	defaultBurst = 100
)

// SnapshotFlags are the flags every verb shares to get a snapshot: the kubectl
// connection flags, or --snapshot to read saved objects instead.
type SnapshotFlags struct {
	ConfigFlags *genericclioptions.ConfigFlags
	// Path is a file, a directory or "-" for stdin; empty reads the live cluster.
	Path     string
	QPS      float32
	Burst    int
	PageSize int64
	// Namespaces are the namespaces the command is about (the gang's), set by
	// the verb; nil means every namespace. A live read lists the namespaced
	// kinds the user may not list cluster-wide in these instead
	// (snapshot.LiveOptions.Namespaces).
	Namespaces []string
	// VolcanoConfigMap is --volcano-config-map: NAMESPACE/NAME of the
	// ConfigMap Volcano's scheduler reads its configuration from; empty:
	// the chart's.
	VolcanoConfigMap string
	// SkipVolcanoConfig, set by a verb given --volcano-config, leaves that
	// ConfigMap unread.
	SkipVolcanoConfig bool
}

// NewSnapshotFlags returns SnapshotFlags with kubectl's connection flags.
func NewSnapshotFlags() *SnapshotFlags {
	return &SnapshotFlags{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		QPS:         defaultQPS,
		Burst:       defaultBurst,
		PageSize:    snapshot.DefaultPageSize,
	}
}

// AddFlags adds the flags to a flag set (the root command's persistent flags).
func (f *SnapshotFlags) AddFlags(flags *pflag.FlagSet) {
	f.ConfigFlags.AddFlags(flags)
	flags.StringVar(&f.Path, "snapshot", f.Path, "Read the cluster from saved objects instead of the API server: a YAML or JSON file, a directory of them, or - for stdin.")
	flags.Float32Var(&f.QPS, "qps", f.QPS, "Requests per second to the API server; 0 sets no client-side limit and leaves it to the server's API Priority and Fairness (requests in flight stay bounded).")
	flags.IntVar(&f.Burst, "burst", f.Burst, "Requests the client may send in a burst above --qps (with --qps above 0).")
	flags.Int64Var(&f.PageSize, "page-size", f.PageSize, "Objects per LIST request when reading a live snapshot.")
	flags.StringVar(&f.VolcanoConfigMap, "volcano-config-map", f.VolcanoConfigMap, "NAMESPACE/NAME of the ConfigMap Volcano's scheduler reads its volcano-scheduler.conf from, read from a cluster that serves Volcano and kept in snapshots (default "+snapshot.DefaultVolcanoConfigMap.String()+").")
}

// volcanoConfigMap is --volcano-config-map, parsed; zero when not given.
func (f *SnapshotFlags) volcanoConfigMap() (types.NamespacedName, error) {
	if f.VolcanoConfigMap == "" {
		return types.NamespacedName{}, nil
	}
	name, err := snapshot.ParseConfigMapName(f.VolcanoConfigMap)
	if err != nil {
		return name, usageErrorf("invalid --volcano-config-map: %v", err)
	}
	return name, nil
}

// Validate checks the flags without I/O.
func (f *SnapshotFlags) Validate() error {
	if f.QPS < 0 {
		return usageErrorf("--qps must be 0 (no client-side limit) or positive, got %v", f.QPS)
	}
	if f.Burst < 1 {
		return usageErrorf("--burst must be at least 1, got %d", f.Burst)
	}
	if f.PageSize < 1 {
		return usageErrorf("--page-size must be at least 1, got %d", f.PageSize)
	}
	_, err := f.volcanoConfigMap()
	return err
}

// Offline reports whether the snapshot comes from saved objects.
func (f *SnapshotFlags) Offline() bool { return f.Path != "" }

// RESTConfig returns the client configuration with the rate limits applied.
func (f *SnapshotFlags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = f.QPS, f.Burst
	if f.QPS == 0 {
		cfg.QPS = -1 // client-go: no rate limiter at all
	}
	return cfg, nil
}

// Namespace is the namespace the subject is resolved in: -n, else the
// kubeconfig context's, else "default". Offline it never needs a server.
func (f *SnapshotFlags) Namespace() (string, error) {
	ns, _, err := f.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		if f.Offline() && f.ConfigFlags.Namespace != nil && *f.ConfigFlags.Namespace != "" {
			return *f.ConfigFlags.Namespace, nil
		}
		if f.Offline() {
			return metav1.NamespaceDefault, nil
		}
		return "", usageErrorf("%v", err)
	}
	return ns, nil
}

// Load reads the snapshot, live or from --snapshot, and prints what it had to
// leave out as warnings on ErrOut.
func (f *SnapshotFlags) Load(ctx context.Context, streams genericiooptions.IOStreams) (*schedule.Snapshot, error) {
	var (
		snap     *schedule.Snapshot
		warnings []string
		err      error
	)
	volcanoConfigMap, err := f.volcanoConfigMap()
	if err != nil {
		return nil, err
	}
	if f.Offline() {
		snap, warnings, err = snapshot.LoadFilesWith(f.Path, streams.In, snapshot.FileOptions{VolcanoConfigMap: volcanoConfigMap})
	} else {
		var cfg *rest.Config
		if cfg, err = f.RESTConfig(); err != nil {
			return nil, err
		}
		progress := &snapshot.Progress{}
		stop := showProgress(streams.ErrOut, func() string {
			return fmt.Sprintf("reading the cluster: %d of %d lists done, %d objects",
				progress.ListsDone.Load(), progress.Lists.Load(), progress.Objects.Load())
		})
		snap, warnings, err = snapshot.Live(ctx, cfg, snapshot.LiveOptions{PageSize: f.PageSize, Progress: progress, Namespaces: f.Namespaces,
			VolcanoConfigMap: volcanoConfigMap, SkipVolcanoConfig: f.SkipVolcanoConfig})
		stop()
	}
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	return snap, nil
}

// LoadForPlacement is Load for the verbs that place pods: a snapshot file
// without nodes is bad input (a file saved without its Node objects), not a
// cluster where "0/0 nodes are available" (docs/design.md#snapshot). A live
// cluster without nodes gets kube-scheduler's answer: that is its state.
func (f *SnapshotFlags) LoadForPlacement(ctx context.Context, streams genericiooptions.IOStreams) (*schedule.Snapshot, error) {
	snap, err := f.Load(ctx, streams)
	if err != nil {
		return nil, err
	}
	if f.Offline() && len(snap.Nodes) == 0 {
		source := f.Path
		if source == "-" {
			source = "<stdin>"
		}
		return nil, usageErrorf("%s: the snapshot holds no nodes; nothing can be placed on it (save it with its Node objects: kubectl gang snapshot)", source)
	}
	return snap, nil
}

// enforcedNamespace is the namespace -n gives, or "" without -n: as
// kubectl does, only a namespace the user named is enforced on the
// objects of -f.
func (f *SnapshotFlags) enforcedNamespace() string {
	if f.ConfigFlags.Namespace == nil {
		return ""
	}
	return *f.ConfigFlags.Namespace
}

// completeNames lists namespace names for shell completion: from
// --snapshot when it names a file or directory (its Namespaces, and the
// namespaces its pods and PodGroups are in, for a hand-made file without
// Namespace objects), else from the cluster. It gives up quietly, since
// completion must never print errors or hang.
func (f *SnapshotFlags) completeNames(ctx context.Context) []string {
	if f.Offline() {
		if f.Path == "-" {
			return nil
		}
		snap, _, err := snapshot.LoadFiles(f.Path, nil)
		if err != nil {
			return nil
		}
		var names []string
		for _, ns := range snap.Namespaces {
			names = append(names, ns.Name)
		}
		for _, p := range snap.Pods {
			names = append(names, p.Namespace)
		}
		for _, pg := range snap.PodGroups {
			names = append(names, pg.GetNamespace())
		}
		slices.Sort(names)
		return slices.Compact(names)
	}
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil
	}
	cfg.Timeout = 5 * time.Second
	names, _ := snapshot.Names(ctx, cfg, "", "namespaces", "")
	slices.Sort(names)
	return names
}
