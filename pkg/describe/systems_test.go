package describe

// Every gang system, registered for this package's tests: the words of a
// system (Rules.Name, Rules.Noun) come from its wing.
import _ "github.com/kubectl-gang/kubectl-gang/pkg/systems"
