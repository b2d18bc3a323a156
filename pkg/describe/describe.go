// Package describe renders the results of explain, place, admit and bind
// for people: the verdict line, tables printed as kubectl get prints them
// (cli-runtime's table printer), sections and colour. It knows no plugin:
// reasons come worded from the core. The machine-readable output is
// pkg/api/v1alpha1.
package describe

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
)

// Options say how to render.
type Options struct {
	// NoHeaders leaves out the tables' headers.
	NoHeaders bool
	// Wide adds a column per Filter plugin to explain's node table (-o wide).
	Wide bool
	// Color styles the verdict and section titles with ANSI escapes; set
	// it only when the output is a terminal.
	Color bool
}

// printTable prints rows under columns as kubectl get does.
func printTable(out io.Writer, noHeaders bool, columns []string, rows [][]any) error {
	t := &metav1.Table{}
	for _, c := range columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c, Type: "string"})
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: r})
	}
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: noHeaders}).PrintObj(t, out)
}
