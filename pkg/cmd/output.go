package cmd

import (
	"bufio"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// output is a verb's result in each form it prints.
type output struct {
	// kind, namespace and name make the v1alpha1 object object returns,
	// built only for -o json, yaml, jsonpath or go-template.
	kind, namespace, name string
	object                func() any
	// human prints for people (no -o, or -o wide).
	human func(describe.Options) error
	// names are what -o name prints, one per line, as kubectl names
	// objects: the pods (pod/NAME) or the PodGroup (podgroup.<group>/NAME).
	names func() []string
}

// printResult prints a verb's result in the format -o asks for, in
// blocks (blockWriter).
func (o *GangVerbOptions) printResult(r output) error {
	out := o.Out
	w, flush := blockWriter(out)
	o.Out = w
	defer func() { o.Out = out }()
	err := o.printResultTo(r)
	if ferr := flush(); err == nil {
		err = ferr
	}
	return err
}

// blockWriter is w written in blocks of 64 KiB when it is not a terminal,
// with the flush to call at the end: the table writer writes each cell
// alone, and -o wide on 65,000 nodes was half a million writes
// (docs/design.md#output). A terminal gets each line as it comes.
func blockWriter(w io.Writer) (io.Writer, func() error) {
	if printers.IsTerminal(w) {
		return w, func() error { return nil }
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	return bw, bw.Flush
}

// printResultTo is printResult on o.Out as it is.
func (o *GangVerbOptions) printResultTo(r output) error {
	format := ptr.Deref(o.PrintFlags.OutputFormat, "")
	switch format {
	case "", "wide":
		return r.human(describe.Options{NoHeaders: o.NoHeaders, Wide: format == "wide"})
	case "name":
		for _, n := range r.names() {
			if _, err := fmt.Fprintln(o.Out, n); err != nil {
				return err
			}
		}
		return nil
	}
	obj, err := v1alpha1.ToObject(r.kind, r.namespace, r.name, r.object())
	if err != nil {
		return err
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, o.Out)
}

// podNames names pods as kubectl -o name does.
func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = "pod/" + p.Name
	}
	return out
}

// gangNames is how -o name names a gang: its PodGroup as kubectl would
// (podgroup.<group>/NAME), or the member pods of a gang without one.
func gangNames(g *gang.Gang) []string {
	if g.PodGroup != nil {
		return []string{"podgroup." + string(g.Source) + "/" + g.Name}
	}
	return podNames(g.Members)
}
