package alert

import (
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// defaultAccountConcurrency is DispatcherOptions.AccountConcurrency's
// default: as fairshare.DefaultShare for the check workers.
const defaultAccountConcurrency = 8

// maxOwners bounds the dispatcher's cache of alert accounts; a full cache
// is emptied and filled again as the passes read the alerts.
const maxOwners = 16384

// owner returns the account of the due delivery's alert: the one its
// index key carries, else (a long account id, or a key written before the
// index carried it) the alert's, read once and kept, as an alert's account never changes (the
// alert read is returned too, for the attempt to use instead of reading it
// again; nil when it was not read).
func (d *Dispatcher) owner(due state.DueDelivery) (string, *statev1.Alert, error) {
	if due.AccountID != "" {
		return due.AccountID, nil, nil
	}
	id := due.AlertID
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
