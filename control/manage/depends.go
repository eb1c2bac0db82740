package manage

import (
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// dependencyErrors checks the depends_on of the manifests a write sends
// (decisions.md 12) against the account as the write leaves it: the
// stored monitors, those the write replaces (same uuid, or same kind and
// name) taken out, and the sent ones added. Each sent manifest's problems
// (dependency_invalid, dependency_cycle) are under its index.
func dependencyErrors(stored []*statev1.Monitor, sent []manifest.Manifest) map[int]manifest.Errors {
	any := false
	for _, m := range sent {
		any = any || len(m.DependsOn) > 0
	}
	if !any {
		return nil
	}
	all := append([]manifest.Manifest{}, sent...)
	uuids, names := map[string]bool{}, map[string]bool{}
	for _, m := range sent {
		if m.UUID != "" {
			uuids[m.UUID] = true
		}
		names[m.Kind+"\x00"+m.Name] = true
	}
	for _, m := range stored {
		if !uuids[m.GetUuid()] && !names[m.GetKind()+"\x00"+m.GetName()] {
			all = append(all, toManifest(m))
		}
	}
	check := make([]int, len(sent))
	for i := range check {
		check[i] = i
	}
	return manifest.CheckDependencies(all, check)
}
