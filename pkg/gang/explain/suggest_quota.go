package explain

import (
	"slices"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// besideQuota puts the quota's refusal beside the changes that make the
// members fit when the namespace's ResourceQuota would refuse to create
// them as well: the refusal leads (nothing starts while the API server
// refuses the pods), and no change to the nodes or the gang alters what
// the quota counts, so a change proven by placing is no longer offered as
// if it would start the gang: it says the quota would still refuse it and
// is not Verified.
//
// Evicting pods of the gang's own namespace frees what the quota counts of
// them once the quota controller recounts (status.used), which this does
// not work out: a preemption with such victims says so.
func besideQuota(ss []Suggestion, q gang.QuotaResult, namespace string) []Suggestion {
	out := []Suggestion{{Kind: SuggestQuota, Message: gang.QuotaRefusal(q) + ": raise the quota or free what it counts, besides making room"}}
	for _, s := range ss {
		switch s.Kind {
		case SuggestShortfall, SuggestNodesTooSmall, SuggestQuota:
		default:
			still := "the quota would still refuse the new members"
			if slices.ContainsFunc(s.Victims, func(v Victim) bool { return v.Pod.Namespace == namespace }) {
				still += ", unless evicting the victims in " + namespace + " frees enough of it"
			}
			if s.Verified {
				s.Verified = false
				s.Message += " (proven by placing, but " + still + ")"
			} else {
				s.Message += " (" + still + ")"
			}
		}
		out = append(out, s)
	}
	return out
}
