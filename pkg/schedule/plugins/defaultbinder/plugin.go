// Package defaultbinder is the DefaultBinder plugin of the default profile.
// The pure core never binds: `kubectl gang bind` binds through the
// pods/binding subresource in pkg/gang, behind a client. The plugin exists
// so that profiles naming it load, and says so if it is ever called.
package defaultbinder

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is the plugin's name in profiles.
const Name = "DefaultBinder"

// DefaultBinder stands in for kube-scheduler's binder.
type DefaultBinder struct{}

var _ framework.BindPlugin = &DefaultBinder{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &DefaultBinder{}, nil
}

// Name returns the plugin's name.
func (*DefaultBinder) Name() string { return Name }

// errNoBinding says binding is not the core's job.
var errNoBinding = errors.New("the scheduling core does not bind; kubectl gang bind does, through the API")

// Bind always fails: see the package comment.
func (*DefaultBinder) Bind(context.Context, *framework.CycleState, *corev1.Pod, string) *framework.Status {
	return framework.AsStatus(errNoBinding)
}
