package gang

import "github.com/kubectl-gang/kubectl-gang/pkg/volcano"

// GateVolcanoEnqueue names Volcano's enqueue step among the gates.
const GateVolcanoEnqueue = "VolcanoEnqueue"

// checkVolcanoQueue names Volcano's queue checks (enqueue and allocate)
// among admit's checks.
const checkVolcanoQueue = "VolcanoQueue"

// The reasons Volcano's enqueue and allocate steps hold a gang back
// (pkg/volcano decides them). Volcano words these only in its messages; the
// reasons are kubectl-gang's.
const (
	// ReasonQueueNotFound: the Volcano queue the group names does not exist.
	ReasonQueueNotFound = volcano.ReasonQueueNotFound
	// ReasonQueueNotOpen: the Volcano queue is Closed or Closing.
	ReasonQueueNotOpen = volcano.ReasonQueueNotOpen
	// ReasonClusterOverused: Volcano's overcommit plugin finds too little idle capacity.
	ReasonClusterOverused = volcano.ReasonClusterOverused
	// ReasonQueueInsufficient: the queue plugin (proportion or capacity)
	// finds the queue's capability or deserved share exhausted.
	ReasonQueueInsufficient = volcano.ReasonQueueInsufficient
	// ReasonQueueOverused: proportion finds the queue holding its deserved share already.
	ReasonQueueOverused = volcano.ReasonQueueOverused
)
