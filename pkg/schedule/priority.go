package schedule

// SystemPriorityClasses are the PriorityClasses every API server has,
// whether or not a snapshot lists them, with their values.
var SystemPriorityClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}
