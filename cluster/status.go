package cluster

import "lookout/cluster/clusterapi"

// Status is the cluster as one node sees it (see clusterapi.Status).
type Status = clusterapi.Status

// ServerStatus is one node of the cluster (see clusterapi.ServerStatus).
type ServerStatus = clusterapi.ServerStatus
