package cmd

import (
	"context"

	"github.com/spf13/cobra"
)

// ctxVerb is the Options pattern with a context for Run.
type ctxVerb interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE runs a verb's Complete, Validate and Run, giving every error its exit code.
func runE(o ctxVerb) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return classify(err)
		}
		if err := o.Validate(); err != nil {
			return classify(err)
		}
		return classify(o.Run(c.Context()))
	}
}

// exitNoUnless ends a verb that printed its result: err if printing
// failed, else exit code 3 unless yes.
func exitNoUnless(err error, yes bool) error {
	if err != nil || yes {
		return err
	}
	return &exitError{code: ExitNo}
}
