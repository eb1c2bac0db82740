package admin

import (
	"fmt"
	"net/http"

	"lookout/cluster/clusterapi"
)

// handleCluster serves GET /admin/v1/cluster: the cluster as this node sees
// it. It makes no consistent read, so that it answers without a leader,
// which is when an operator needs it most.
func (a *API) handleCluster(w http.ResponseWriter, r *http.Request) {
	st, err := a.cluster.Status(r.Context())
	if err != nil {
		a.fail(w, r, fmt.Errorf("cluster status: %w", err))
		return
	}
	if st.Nodes == nil {
		st.Nodes = []clusterapi.ServerStatus{}
	}
	writeJSON(w, http.StatusOK, st)
}
