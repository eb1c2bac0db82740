package alert

import statev1 "lookout/internal/gen/lookout/state/v1"

// defaultAccountConcurrency is DispatcherOptions.AccountConcurrency's
// default: as fairshare.DefaultShare for the check workers.
const defaultAccountConcurrency = 8

// maxOwners bounds the dispatcher's cache of alert accounts; a full cache
// is emptied and filled again as the passes read the alerts.
const maxOwners = 16384

// owner returns the account of alert id, which the outbox index does not
// carry. An alert's account never changes, so it is read once and kept
// (the alert read is returned too, for the attempt to use instead of
// reading it again; nil when the account was known).
func (d *Dispatcher) owner(id string) (string, *statev1.Alert, error) {
	d.mu.Lock()
	account, ok := d.owners[id]
	d.mu.Unlock()
	if ok {
		return account, nil, nil
	}
	a, err := d.o.State.Alert(id)
	if err != nil {
		return "", nil, err
	}
	d.mu.Lock()
	if len(d.owners) >= maxOwners {
		clear(d.owners)
	}
	d.owners[id] = a.GetAccountId()
	d.mu.Unlock()
	return a.GetAccountId(), a, nil
}
