package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
)

// Exit codes, the same for every verb (docs/design.md#commands).
const (
	// ExitOK means yes, or done.
	ExitOK = 0
	// ExitError means an API, I/O or internal error.
	ExitError = 1
	// ExitUsage means a bad flag, argument, manifest or snapshot.
	ExitUsage = 2
	// ExitNo is a clean "no": not schedulable, not placed, not admitted, nothing bound.
	ExitNo = 3
	// ExitPartial means a bind left some members bound and some not.
	ExitPartial = 4
	// ExitUnverified means a bind wrote Bindings but the outcome is not a
	// verified yes: a node is overcommitted by pods others bound, or what
	// the server holds could not be read back.
	ExitUnverified = 5
)

// exitError carries the exit code an error ends the command with. A nil err
// with a code is a silent exit: the verb has already said what there was to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports bad input from the user: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// classify gives every error a verb returns its exit code, so that only errors
// cobra raises itself (unknown commands, flags, argument counts) arrive at Main
// untyped, and those are usage errors.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var exit *exitError
	if errors.As(err, &exit) {
		return err
	}
	var input *snapshot.InputError
	if errors.As(err, &input) {
		return &exitError{code: ExitUsage, err: err}
	}
	return &exitError{code: ExitError, err: err}
}

// exitCode is the process exit code for an error returned by the root command.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	return ExitUsage
}

// oneLine makes an error fit the one-line promise: cobra's messages carry
// suggestions on further lines, and API errors sometimes carry bodies.
func oneLine(msg string) string {
	first, rest, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	first = strings.TrimSpace(first)
	if strings.Contains(rest, "Did you mean this?") {
		var suggestions []string
		for _, l := range strings.Split(rest, "\n") {
			if l = strings.TrimSpace(l); l != "" && l != "Did you mean this?" {
				suggestions = append(suggestions, fmt.Sprintf("%q", l))
			}
		}
		if len(suggestions) > 0 {
			first += " (did you mean " + strings.Join(suggestions, " or ") + "?)"
		}
	}
	return first
}
