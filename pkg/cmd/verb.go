package cmd

import (
	"slices"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

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
