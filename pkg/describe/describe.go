// Package describe renders the results of explain, place, admit and bind
// for people: the verdict line, tables printed as kubectl get prints them
// (cli-runtime's table printer), sections and colour. It knows no plugin:
// reasons come worded from the core. The machine-readable output is
// pkg/api/v1alpha1.
package describe

import (
	"fmt"
	"io"
	"strings"
	"time"

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
	// MaxRows caps explain's node and domain tables (0: no cap; -o wide
	// shows every row).
	MaxRows int
	// Configuration names the configuration of the gang system's
	// scheduler the gang was judged with, as a whole line ("X
	// configuration: ..."), printed once; empty for gangs whose system
	// has none, which print nothing of it.
	Configuration string
	// Now is the time ages are counted to; zero: the clock's.
	Now time.Time
}

// lineWidth is the terminal width the human output fits: long text wraps,
// and table cells that would run past it are cut.
const lineWidth = 120

// wrap breaks text into lines of at most width characters at spaces; a
// word longer than the width stands on a line of its own.
func wrap(text string, width int) []string {
	if width < 20 {
		width = 20
	}
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case len(line)+1+len(word) <= width:
				line += " " + word
			default:
				lines = append(lines, line)
				line = word
			}
		}
		lines = append(lines, line)
	}
	return lines
}

// cellWidth is how wide cli-runtime's table printer makes a column: its
// widest cell plus 3 spaces of padding, at least 10.
func cellWidth(columns []string, rows [][]any, i int, noHeaders bool) int {
	widest := 0
	if !noHeaders {
		widest = len(columns[i])
	}
	for _, r := range rows {
		if i < len(r) {
			widest = max(widest, len(fmt.Sprint(r[i])))
		}
	}
	return max(widest+3, 10)
}

// fitLastColumn cuts the last column's cells so that rows fit lineWidth.
func fitLastColumn(columns []string, rows [][]any, noHeaders bool) {
	fitColumn(columns, rows, len(columns)-1, noHeaders)
}

// fitColumn cuts column i's cells (to no less than 24 characters, ending
// in "...") so that rows fit lineWidth.
func fitColumn(columns []string, rows [][]any, i int, noHeaders bool) {
	others := 0
	for j := range columns {
		if j != i {
			others += cellWidth(columns, rows, j, noHeaders)
		}
	}
	room := lineWidth - others
	if i < len(columns)-1 {
		room -= 3 // its own padding
	}
	room = max(room, 24)
	for _, r := range rows {
		if i >= len(r) {
			continue
		}
		if c := fmt.Sprint(r[i]); len(c) > room {
			r[i] = c[:room-3] + "..."
		}
	}
}

// printFitTable prints rows as printTable does, the last column cut to the
// line width first unless wide.
func printFitTable(out io.Writer, noHeaders, wide bool, columns []string, rows [][]any) error {
	if !wide {
		fitLastColumn(columns, rows, noHeaders)
	}
	return printTable(out, noHeaders, columns, rows)
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
