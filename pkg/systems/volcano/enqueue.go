package volcano

import model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"

// GateEnqueue names Volcano's enqueue step among the gates.
const GateEnqueue = "VolcanoEnqueue"

// CheckQueue names Volcano's queue checks (enqueue and allocate)
// among admit's checks.
const CheckQueue = "VolcanoQueue"

// The reasons Volcano's enqueue and allocate steps hold a gang back
// (pkg/volcano decides them). Volcano words these only in its messages; the
// reasons are kubectl-gang's.
const (
	// ReasonQueueNotFound: the Volcano queue the group names does not exist.
	ReasonQueueNotFound = model.ReasonQueueNotFound
	// ReasonQueueNotOpen: the Volcano queue is Closed or Closing.
	ReasonQueueNotOpen = model.ReasonQueueNotOpen
	// ReasonClusterOverused: Volcano's overcommit plugin finds too little idle capacity.
	ReasonClusterOverused = model.ReasonClusterOverused
	// ReasonQueueInsufficient: the queue plugin (proportion or capacity)
	// finds the queue's capability or deserved share exhausted.
	ReasonQueueInsufficient = model.ReasonQueueInsufficient
	// ReasonQueueOverused: proportion finds the queue holding its deserved share already.
	ReasonQueueOverused = model.ReasonQueueOverused
)
