// Package cmd holds the kubectl gang command line: one file per verb, each an
// Options struct with Complete, Validate and Run, in kubectl's style.
package cmd

import (
	"context"
	goflag "flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	// Every gang system kubectl-gang models (docs/design.md#gang-systems).
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
)

var rootLong = templates.LongDesc(`
	kubectl gang takes one snapshot of a cluster, runs a kube-scheduler-compatible
	filter and score pipeline plus all-or-nothing gang placement on it once, and then
	explains, places, admits or binds a whole PodGroup.

	A gang is a native scheduling.k8s.io PodGroup, a Volcano or a coscheduling
	PodGroup, the pods a label selector picks, a workload read from the cluster
	(jobset/NAME, job/NAME, rayjob/NAME, ...), or manifests from a file.

	Every verb reads the cluster your kubeconfig points at, or works offline on a
	snapshot saved with 'kubectl gang snapshot' (--snapshot FILE|DIR|-).

	Exit codes: 0 yes or done, 1 error, 2 bad input, 3 a clean "no" or not
	verified, 4 a partial bind, 5 a bind whose outcome is not a verified yes
	(a node overcommitted by others, or what the server holds not read back).`)

var rootExample = templates.Examples(`
	# Why is this gang Pending, and what would make it fit?
	kubectl gang explain podgroup/llm-pretrain -n ml-research

	# Will it fit, and where? (JSON for scripts; exit code 3 when it does not fit)
	kubectl gang place podgroup/llm-pretrain -n ml-research -o json

	# Work offline on a saved snapshot
	kubectl gang snapshot > cluster.yaml
	kubectl gang explain podgroup/llm-pretrain -n ml-research --snapshot cluster.yaml`)

// NewCmdGang returns the root `kubectl gang` command with every verb.
func NewCmdGang(streams genericiooptions.IOStreams) *cobra.Command {
	snapshotFlags := NewSnapshotFlags()
	cmd := &cobra.Command{
		Use:     "kubectl-gang",
		Short:   "Explain, place, admit and bind gangs of pods all-or-nothing",
		Long:    rootLong,
		Example: rootExample,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl gang",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		// Warnings the API server sends (deprecated versions, for example)
		// reach the user once, on stderr, as kubectl prints them.
		PersistentPreRun: func(*cobra.Command, []string) {
			rest.SetDefaultWarningHandler(rest.NewWarningWriter(streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true}))
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w; see '%s --help'", err, c.CommandPath())
	})
	snapshotFlags.AddFlags(cmd.PersistentFlags())
	addVerbosityFlags(cmd, streams)
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	cmd.AddCommand(
		NewCmdExplain(snapshotFlags, streams),
		NewCmdPlace(snapshotFlags, streams),
		NewCmdCapacity(snapshotFlags, streams),
		NewCmdAdmit(snapshotFlags, streams),
		NewCmdBind(snapshotFlags, streams),
		NewCmdSnapshot(snapshotFlags, streams),
		NewCmdVersion(streams),
	)
	registerCompletions(cmd, snapshotFlags)
	return cmd
}

// Main runs kubectl gang with args and returns the process exit code. Errors
// are printed as one line on ErrOut. A panic is a bug, but even then the user
// gets one line and exit code 1; KUBECTL_GANG_TRACE=1 shows the stack.
func Main(args []string, streams genericiooptions.IOStreams) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(streams.ErrOut, "error: internal error: %v (please report it; KUBECTL_GANG_TRACE=1 prints the stack)\n", r)
			if os.Getenv("KUBECTL_GANG_TRACE") == "1" {
				fmt.Fprintf(streams.ErrOut, "%s", debug.Stack())
			}
			code = ExitError
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The first Ctrl-C cancels the context, which every verb honours (bind
	// finishes the Bindings in flight); a second one, for a server that
	// never answers, ends the process as Go's default handler does.
	context.AfterFunc(ctx, stop)
	cmd := NewCmdGang(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		if msg := oneLine(err.Error()); msg != "" {
			fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
		}
	}
	return exitCode(err)
}

// registerCompletions adds shell completion for the global flags whose values
// can be listed: snapshot files, kubeconfig contexts and namespaces.
func registerCompletions(cmd *cobra.Command, f *SnapshotFlags) {
	_ = cmd.RegisterFlagCompletionFunc("snapshot", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
	})
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		raw, err := f.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return slices.Sorted(maps.Keys(raw.Contexts)), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return f.completeNames(c.Context()), cobra.ShellCompDirectiveNoFileComp
	})
}

// addVerbosityFlags adds kubectl's -v/--v: client-go logs each HTTP request
// with its status and time at 6, the headers at 7, the bodies (cut) at 8
// and more, as kubectl does. Logs go to the command's stderr. Every run
// starts at 0, so one in-process run does not leak its level into the next.
func addVerbosityFlags(cmd *cobra.Command, streams genericiooptions.IOStreams) {
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "0")
	_ = fs.Set("logtostderr", "false")
	klog.SetOutput(streams.ErrOut)
	v := pflag.PFlagFromGoFlag(fs.Lookup("v"))
	v.Shorthand = "v"
	v.Usage = "Number for the log level verbosity: 6 logs each request to the API server, 7 its headers, 8 its body, as kubectl."
	cmd.PersistentFlags().AddFlag(v)
}
