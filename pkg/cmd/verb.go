package cmd

import (
	"slices"
	"strings"

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
		msg := oneLine(err.Error())
		// cli-runtime lists the machine formats; the human ones are ours.
		if len(human) > 0 && strings.Contains(msg, "allowed formats are: ") {
			msg = strings.Replace(msg, "allowed formats are: ", "allowed formats are: "+strings.Join(human, ",")+",", 1)
		}
		return usageErrorf("%v", msg)
	}
	return nil
}
