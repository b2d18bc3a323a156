package capacity

// Every gang system, registered for this package's tests.
import _ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
