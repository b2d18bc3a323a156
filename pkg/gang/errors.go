package gang

import (
	"fmt"
	"strings"
)

// NotFoundError reports a gang, PodGroup or pod the snapshot does not hold.
// Its message reads like kubectl's, plus a hint at what the snapshot does
// hold, so that a typo can be told from a gang scheduler that is not installed.
type NotFoundError struct {
	// Resource is what was looked for, as kubectl names it: "podgroups",
	// "podgroups.scheduling.x-k8s.io", "pods".
	Resource string
	// Namespace is where it was looked for; "" means every namespace.
	Namespace string
	// Name is the object's name; empty for a selector.
	Name string
	// Selector is the label selector that matched no pods.
	Selector string
	// Hint completes the message; may be empty.
	Hint string
	// Unreadable names the kinds it could be of that the live read was
	// refused the list of where it would be ("podgroups.scheduling.k8s.io"):
	// then its absence is unknown, not "not found" (issue #42), and the
	// error says it could not be read.
	Unreadable []string
}

// Unread reports whether the object may exist but could not be read.
func (e *NotFoundError) Unread() bool { return len(e.Unreadable) > 0 }

func (e *NotFoundError) Error() string {
	if e.Unread() {
		return fmt.Sprintf("%s %q in namespace %q could not be read: the list of %s was refused, so whether it exists is unknown",
			e.Resource, e.Name, e.Namespace, strings.Join(e.Unreadable, ", "))
	}
	var b strings.Builder
	if e.Selector != "" || e.Name == "" {
		fmt.Fprintf(&b, "no %s match selector %q", e.Resource, e.Selector)
	} else {
		fmt.Fprintf(&b, "%s %q not found", e.Resource, e.Name)
	}
	if e.Namespace != "" {
		fmt.Fprintf(&b, " in namespace %q", e.Namespace)
	} else {
		b.WriteString(" in any namespace")
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// AmbiguousError reports a PodGroup name that exists in more than one API
// group; the user picks one with a fully qualified podgroups.<group>/NAME.
type AmbiguousError struct {
	Namespace string
	Name      string
	// Choices are the candidates as podgroups.<group>/<name>, sorted.
	Choices []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("podgroup %q in namespace %q exists in %d API groups; name one of: %s",
		e.Name, e.Namespace, len(e.Choices), strings.Join(e.Choices, ", "))
}
