// Package framework defines the scheduling framework kubectl-gang's pipeline
// and plugins share: Status, CycleState, NodeInfo and the extension points.
// It has the shape of kube-scheduler's framework (k8s.io/kube-scheduler/framework)
// without its Handle, which needs a client: here plugins see only a snapshot.
package framework

import (
	"errors"
	"strings"
)

// Code is the outcome of a plugin at an extension point.
type Code int

// The codes a Status carries, with kube-scheduler's meanings.
const (
	// Success means the plugin ran and accepts; a nil *Status is Success.
	Success Code = iota
	// Error is an internal error: the cycle stops.
	Error
	// Unschedulable rejects the pod for now; preemption may change that.
	Unschedulable
	// UnschedulableAndUnresolvable rejects the pod where preemption cannot help.
	UnschedulableAndUnresolvable
	// Wait is a Permit plugin holding the pod back.
	Wait
	// Skip tells the framework to skip the plugin's later extension points for this pod.
	Skip
	// Pending means the pod waits on something outside the scheduler.
	Pending
)

var codeNames = []string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of running a plugin: a code, the reasons (worded for a
// node count, as kube-scheduler words them: "node(s) didn't match ..."), the
// plugin that decided, and the error behind an Error. nil means Success.
type Status struct {
	code         Code
	reasons      []string
	err          error
	plugin       string
	notEvaluated bool
}

// NotEvaluated returns a Skip status for something the pipeline cannot
// evaluate on a snapshot (dynamic resource claims, volumes that wait for a
// consumer, ...). The runner skips the plugin for this pod and reports what
// in Result.NotEvaluated, so it never passes silently.
func NotEvaluated(what string) *Status {
	return &Status{code: Skip, reasons: []string{what}, notEvaluated: true}
}

// NotEvaluatedOnNode returns the Filter status of a node whose verdict the
// pipeline cannot know on the snapshot (an extended resource the node does
// not advertise, which a DeviceClass the snapshot could not list may back):
// the node is not counted as feasible, which never makes a wrong yes, and
// when no node is, the runner reports what in Result.NotEvaluated, so the
// "no" is not a confident one either. UnschedulableAndUnresolvable:
// preemption cannot make it known.
func NotEvaluatedOnNode(what string) *Status {
	return &Status{code: UnschedulableAndUnresolvable, reasons: []string{what}, notEvaluated: true}
}

// IsNotEvaluated reports a status made by NotEvaluated or NotEvaluatedOnNode.
func (s *Status) IsNotEvaluated() bool { return s != nil && s.notEvaluated }

// NewStatus returns a Status with a code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status; nil stays nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the code; a nil Status is Success.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", ", as kube-scheduler does.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin names the plugin that returned the status.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records the plugin that returned the status and returns it. It
// writes only when the name changes, so a plugin may return one shared,
// preallocated status (WithPlugin already applied) from parallel Filter calls
// without a data race or a heap allocation per node.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil && s.plugin != name {
		s.plugin = name
	}
	return s
}

// IsSuccess reports a nil or Success status.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports a Skip status.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsWait reports a Wait status.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsRejected reports a status that keeps the pod off the node (or off every node).
func (s *Status) IsRejected() bool {
	switch s.Code() {
	case Unschedulable, UnschedulableAndUnresolvable, Pending:
		return true
	}
	return false
}

// AsError returns the status as an error: nil unless it is an Error.
func (s *Status) AsError() error {
	if s.Code() != Error {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// String is the status for logs and tests.
func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	out := s.code.String()
	if s.plugin != "" {
		out += " (" + s.plugin + ")"
	}
	if len(s.reasons) > 0 {
		out += ": " + s.Message()
	}
	return out
}

// Equal compares two statuses by code, reasons and plugin.
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || s.plugin != o.plugin || len(s.reasons) != len(o.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != o.reasons[i] {
			return false
		}
	}
	return true
}
