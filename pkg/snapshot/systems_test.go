package snapshot

// Every gang system, registered for this package's tests: the readers keep
// the kinds the wings register (schedule.ObjectKind).
import _ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
