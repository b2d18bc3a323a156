package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/version"
)

// VersionOptions are the inputs of `kubectl gang version`.
type VersionOptions struct {
	Output string
	// Client is accepted as kubectl's version --client: kubectl-gang is
	// a client only, so it changes nothing.
	Client bool
	genericiooptions.IOStreams
}

// NewCmdVersion returns the version verb.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version [--client] [-o json|yaml]",
		Short: "Print the kubectl-gang version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return classify(o.Run())
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "One of 'yaml' or 'json'.")
	cmd.Flags().BoolVar(&o.Client, "client", o.Client, "Print the client version only, as kubectl does (kubectl-gang has no server part: always so).")
	return cmd
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	info := version.Get()
	switch o.Output {
	case "":
		fmt.Fprintf(o.Out, "kubectl-gang %s (%s, %s)\n", info.Version, info.GoVersion, info.Platform)
		return nil
	case "json":
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "%s\n", data)
		return nil
	case "yaml":
		data, err := yaml.Marshal(info)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(data)
		return err
	}
	return usageErrorf("--output must be 'yaml' or 'json', got %q", o.Output)
}
