// Package systems registers every gang system kubectl-gang models with the
// gang core (docs/design.md#gang-systems): each is a wing of its own, and
// adding one is a package plus one line here. kube-scheduler's native
// PodGroups, the gang core's own system, need no line.
package systems

import (
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
	_ "github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)
