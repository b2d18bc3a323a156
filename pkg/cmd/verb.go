package cmd

import (
	"slices"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// verbOptions is the kubectl Options pattern every verb follows.
type verbOptions interface {
	Complete(args []string) error
	Validate() error
	Run() error
}

// runVerb runs a verb's Complete, Validate and Run in order.
func runVerb(o verbOptions, args []string) error {
	if err := o.Complete(args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run()
}

// validateOutput checks -o: empty (the human table), one of the human
// formats a verb adds (such as wide), or a format cli-runtime prints.
func validateOutput(pf *genericclioptions.PrintFlags, human ...string) error {
	format := ""
	if pf.OutputFormat != nil {
		format = *pf.OutputFormat
	}
	if format == "" || slices.Contains(human, format) {
		return nil
	}
	if _, err := pf.ToPrinter(); err != nil {
		return usageErrorf("%v", oneLine(err.Error()))
	}
	return nil
}
