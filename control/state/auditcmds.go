package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Which commands write audit entries, and what each entry says. applyOnce
// calls auditBefore before a command's apply function (to read what the
// change replaces or deletes) and auditAfter once it applied with OK (a
// refused command changes nothing and writes no entry).
//
// Recorded, in the account they change: monitors (create, update and
// delete; apply, one entry per monitor it creates or changes; a ping
// monitor a ping created, with the ingest key as actor), keys, channels,
// notification groups, the account's creation, plan and password, its
// badge key and status page, and panel sign-ins and sign-outs. Not
// recorded: the leader's own work (deadlines, deliveries, executions,
// agent presence, pruning), a key's last use, a badge key made at its
// first read, a ping that moves its monitor into another project (its
// event says so, and finding it out would cost a read per ping with a
// project), and what the operator changes outside accounts (agent tokens,
// agents, restores).
//
// Also recorded: pauses and resumes of a monitor, maintenance windows,
// users and invitations. A pause that ends by itself (its until passed),
// like the rest of the leader's judging afresh, is not.
//
// A command added later that changes an account gets a case in
// auditBefore (when the entry needs the record before the change) and in
// auditAfter.

// The target kinds of audit entries.
const (
	AuditMonitor      = "monitor"
	AuditKey          = "key"
	AuditChannel      = "channel"
	AuditGroup        = "notification_group"
	AuditAccount      = "account"
	AuditStatusPage   = "status_page"
	AuditUser         = "user"
	AuditInvite       = "invite"
	AuditWindow       = "maintenance_window"
	auditActionApply  = "apply"
	auditActionCreate = "create"
	auditActionUpdate = "update"
	auditActionDelete = "delete"
)

// auditPrior is what a command's entries need of the state before it
// applies.
type auditPrior struct {
	monitors map[string]*statev1.Monitor // by uuid
	key      *raftv1.Key
	channel  *statev1.Channel
	group    *statev1.NotificationGroup
	account  *statev1.Account
	page     *statev1.StatusPage
	window   *raftv1.MaintenanceWindow
	user     *statev1.User
	// unchanged: the command will change nothing (an ended session
	// ended again).
	unchanged bool
}

// auditBefore reads what cmd's entries will need of the state as it is
// before cmd applies. Records that are absent stay nil: the apply
// function refuses the command then, and auditAfter is not called.
func auditBefore(txn *badger.Txn, ctx applyCtx, cmd *raftv1.Command) (*auditPrior, error) {
	p := &auditPrior{}
	var err error
	switch op := cmd.GetOp().(type) {
	case *raftv1.Command_PutMonitors:
		p.monitors = map[string]*statev1.Monitor{}
		for _, s := range op.PutMonitors.GetUpdates() {
			m, err := getMonitorIn(txn, ctx.values, s.GetUuid())
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, err
			}
			p.monitors[s.GetUuid()] = m
		}
	case *raftv1.Command_DeleteMonitor:
		var m *statev1.Monitor
		m, err = getMonitorIn(txn, ctx.values, op.DeleteMonitor.GetMonitorUuid())
		p.monitors = map[string]*statev1.Monitor{op.DeleteMonitor.GetMonitorUuid(): m}
	case *raftv1.Command_RevokeKey:
		p.key, err = keyByID(txn, op.RevokeKey.GetAccountId(), op.RevokeKey.GetKeyId())
	case *raftv1.Command_UpdateChannel:
		p.channel, err = readRecord(txn, channelKey(op.UpdateChannel.GetAccountId(), op.UpdateChannel.GetChannelId()), new(statev1.Channel))
	case *raftv1.Command_DeleteChannel:
		p.channel, err = readRecord(txn, channelKey(op.DeleteChannel.GetAccountId(), op.DeleteChannel.GetChannelId()), new(statev1.Channel))
	case *raftv1.Command_UpdateNotificationGroup:
		c := op.UpdateNotificationGroup
		p.group, err = readRecord(txn, k(prefixGroup, c.GetAccountId(), c.GetGroupId()), new(statev1.NotificationGroup))
	case *raftv1.Command_DeleteNotificationGroup:
		c := op.DeleteNotificationGroup
		p.group, err = readRecord(txn, k(prefixGroup, c.GetAccountId(), c.GetGroupId()), new(statev1.NotificationGroup))
	case *raftv1.Command_SetPlan:
		p.account, err = readRecord(txn, k(prefixAccount, op.SetPlan.GetAccountId()), new(statev1.Account))
	case *raftv1.Command_PutStatusPage:
		p.page, err = readRecord(txn, statusPageKey(op.PutStatusPage.GetAccountId()), new(statev1.StatusPage))
	case *raftv1.Command_SetBadgeKey:
		p.account, err = readRecord(txn, k(prefixAccount, op.SetBadgeKey.GetAccountId()), new(statev1.Account))
	case *raftv1.Command_SetPassword:
		p.account, err = readRecord(txn, k(prefixAccount, op.SetPassword.GetAccountId()), new(statev1.Account))
	case *raftv1.Command_EndSession:
		p.unchanged, err = exists(txn, k(prefixSessionEnd, op.EndSession.GetSessionId()))
	case *raftv1.Command_PauseMonitor:
		c := op.PauseMonitor
		var m *statev1.Monitor
		m, err = getMonitorIn(txn, ctx.values, c.GetMonitorUuid())
		p.monitors = map[string]*statev1.Monitor{c.GetMonitorUuid(): m}
		// A resume of a monitor that is not paused changes nothing.
		p.unchanged = err == nil && !c.GetPause() && !m.GetQuiet().GetPaused()
	case *raftv1.Command_PutMaintenanceWindow:
		win := op.PutMaintenanceWindow.GetWindow()
		p.window, err = readRecord(txn, windowKey(win.GetAccountId(), win.GetId()), new(raftv1.MaintenanceWindow))
	case *raftv1.Command_DeleteMaintenanceWindow:
		c := op.DeleteMaintenanceWindow
		p.window, err = readRecord(txn, windowKey(c.GetAccountId(), c.GetId()), new(raftv1.MaintenanceWindow))
	case *raftv1.Command_UpdateUser:
		c := op.UpdateUser
		p.user, err = readRecord(txn, userKey(c.GetAccountId(), c.GetUserId()), new(statev1.User))
	case *raftv1.Command_RemoveUser:
		c := op.RemoveUser
		p.user, err = readRecord(txn, userKey(c.GetAccountId(), c.GetUserId()), new(statev1.User))
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return p, nil
}

// auditAfter writes the entries of cmd, which has just applied with OK,
// and applies the accounts' bound.
func auditAfter(txn *badger.Txn, ctx applyCtx, cmd *raftv1.Command, res *raftv1.Result, p *auditPrior) error {
	if p.unchanged {
		return nil
	}
	w := newAuditWriter(txn, ctx, cmd.GetActor())
	var err error
	switch op := cmd.GetOp().(type) {
	case *raftv1.Command_PutMonitors:
		err = auditPutMonitors(w, ctx, op.PutMonitors, p)
	case *raftv1.Command_IngestBatch:
		err = auditCreatedByPings(w, ctx, op.IngestBatch, res)
	case *raftv1.Command_DeleteMonitor:
		m := p.monitors[op.DeleteMonitor.GetMonitorUuid()]
		err = w.add(m.GetAccountId(), nil, auditActionDelete, monitorTarget(m), monitorDiff(m, nil))
	case *raftv1.Command_CreateKey:
		key := op.CreateKey.GetKey()
		err = w.add(key.GetAccountId(), nil, "key.create", keyTarget(key), fieldDiff(nil, keyFields(key)))
	case *raftv1.Command_RevokeKey:
		err = w.add(op.RevokeKey.GetAccountId(), nil, "key.revoke", keyTarget(p.key), fieldDiff(keyFields(p.key), nil))
	case *raftv1.Command_CreateChannel:
		c := op.CreateChannel
		after := &statev1.Channel{Id: c.GetChannelId(), Type: c.GetType(), Name: c.GetName(), ConfigJson: c.GetConfigJson(), IsDefault: c.GetIsDefault()}
		err = w.add(c.GetAccountId(), nil, "channel.create", channelTarget(after), fieldDiff(nil, channelFields(after)))
	case *raftv1.Command_UpdateChannel:
		c := op.UpdateChannel
		after := &statev1.Channel{Id: c.GetChannelId(), Type: c.GetType(), Name: c.GetName(), ConfigJson: c.GetConfigJson(), IsDefault: c.GetIsDefault()}
		err = w.addChange(c.GetAccountId(), "channel.update", channelTarget(after), fieldDiff(channelFields(p.channel), channelFields(after)))
	case *raftv1.Command_DeleteChannel:
		err = w.add(op.DeleteChannel.GetAccountId(), nil, "channel.delete", channelTarget(p.channel), fieldDiff(channelFields(p.channel), nil))
	case *raftv1.Command_CreateNotificationGroup:
		c := op.CreateNotificationGroup
		after := &statev1.NotificationGroup{Id: c.GetGroupId(), Name: c.GetName(), ChannelsJson: c.GetChannelsJson()}
		err = w.add(c.GetAccountId(), nil, "notification_group.create", groupTarget(after), fieldDiff(nil, groupFields(after)))
	case *raftv1.Command_UpdateNotificationGroup:
		c := op.UpdateNotificationGroup
		after := &statev1.NotificationGroup{Id: c.GetGroupId(), Name: c.GetName(), ChannelsJson: c.GetChannelsJson()}
		err = w.addChange(c.GetAccountId(), "notification_group.update", groupTarget(after), fieldDiff(groupFields(p.group), groupFields(after)))
	case *raftv1.Command_DeleteNotificationGroup:
		err = w.add(op.DeleteNotificationGroup.GetAccountId(), nil, "notification_group.delete", groupTarget(p.group), fieldDiff(groupFields(p.group), nil))
	case *raftv1.Command_CreateAccount:
		c := op.CreateAccount
		after := map[string]any{"email": c.GetEmail(), "plan": c.GetPlan().GetName(), "password": len(c.GetPasswordHash()) > 0}
		err = w.add(c.GetAccountId(), nil, "account.create", &statev1.AuditTarget{Kind: AuditAccount, Uuid: c.GetAccountId(), Name: c.GetEmail()}, fieldDiff(nil, after))
	case *raftv1.Command_SetPlan:
		err = w.addChange(p.account.GetId(), "plan.update", accountTarget(p.account), fieldDiff(planFields(p.account.GetPlan()), planFields(op.SetPlan.GetPlan())))
	case *raftv1.Command_SetPassword:
		c := op.SetPassword
		action := "password.set"
		if len(c.GetPasswordHash()) == 0 {
			action = "password.remove"
		}
		err = w.add(c.GetAccountId(), nil, action, accountTarget(p.account), nil)
	case *raftv1.Command_SetBadgeKey:
		if !op.SetBadgeKey.GetIfNone() { // if_none makes the first key at its first read
			err = w.add(p.account.GetId(), nil, "badge_key.regenerate", accountTarget(p.account), nil)
		}
	case *raftv1.Command_PutStatusPage:
		c := op.PutStatusPage
		after := &statev1.StatusPage{Enabled: c.GetEnabled(), Slug: c.GetSlug(), Title: c.GetTitle(), Match: c.GetMatch()}
		err = w.addChange(c.GetAccountId(), "status_page.update", &statev1.AuditTarget{Kind: AuditStatusPage, Name: c.GetSlug()}, fieldDiff(pageFields(p.page), pageFields(after)))
	case *raftv1.Command_EndSession:
		err = w.add(op.EndSession.GetAccountId(), nil, "sign_out", userTarget(cmd.GetActor()), nil)
	case *raftv1.Command_RecordSignIn:
		c := op.RecordSignIn
		err = w.add(c.GetAccountId(), nil, "sign_in", userTarget(cmd.GetActor()), fieldDiff(nil, map[string]any{"method": c.GetMethod()}))
	case *raftv1.Command_PauseMonitor:
		c := op.PauseMonitor
		action, diff := "resume", map[string][2]any{"paused": {true, false}}
		if c.GetPause() {
			action = "pause"
			diff = fieldDiff(nil, map[string]any{"paused": true, "until": timeOrNil(c.GetUntilUnixMs()), "reason": orNil(c.GetReason())})
		}
		err = w.add(c.GetAccountId(), nil, action, monitorTarget(p.monitors[c.GetMonitorUuid()]), diff)
	case *raftv1.Command_PutMaintenanceWindow:
		c := op.PutMaintenanceWindow
		action := "maintenance_window.update"
		if c.GetCreate() {
			action = "maintenance_window.create"
		}
		win := c.GetWindow()
		err = w.addChange(win.GetAccountId(), action, windowTarget(win), fieldDiff(windowFields(p.window), windowFields(win)))
	case *raftv1.Command_DeleteMaintenanceWindow:
		err = w.add(op.DeleteMaintenanceWindow.GetAccountId(), nil, "maintenance_window.delete", windowTarget(p.window), fieldDiff(windowFields(p.window), nil))
	case *raftv1.Command_AddUser:
		c := op.AddUser
		err = w.add(c.GetAccountId(), nil, "user.add", &statev1.AuditTarget{Kind: AuditUser, Uuid: c.GetUserId(), Name: c.GetEmail()},
			fieldDiff(nil, map[string]any{"email": c.GetEmail(), "role": c.GetRole(), "password": len(c.GetPasswordHash()) > 0}))
	case *raftv1.Command_UpdateUser:
		c := op.UpdateUser
		target := &statev1.AuditTarget{Kind: AuditUser, Uuid: c.GetUserId(), Name: p.user.GetEmail()}
		before, after := map[string]any{}, map[string]any{}
		if c.GetRole() != "" {
			before["role"], after["role"] = orNil(p.user.GetRole()), c.GetRole()
		}
		diff := fieldDiff(before, after)
		if c.GetSetPassword() {
			diff["password"] = [2]any{nil, "set"} // the fact, never the hash
		}
		err = w.addChange(c.GetAccountId(), "user.update", target, diff)
	case *raftv1.Command_RemoveUser:
		c := op.RemoveUser
		err = w.add(c.GetAccountId(), nil, "user.remove", &statev1.AuditTarget{Kind: AuditUser, Uuid: c.GetUserId(), Name: p.user.GetEmail()},
			fieldDiff(map[string]any{"email": orNil(p.user.GetEmail()), "role": orNil(p.user.GetRole())}, nil))
	case *raftv1.Command_CreateInvite:
		c := op.CreateInvite
		err = w.add(c.GetAccountId(), nil, "invite.create", &statev1.AuditTarget{Kind: AuditInvite, Uuid: c.GetInviteId(), Name: c.GetEmail()},
			fieldDiff(nil, map[string]any{"email": c.GetEmail(), "role": c.GetRole(), "expires": timeOrNil(c.GetExpiresUnixMs())}))
	case *raftv1.Command_AcceptInvite:
		c := op.AcceptInvite
		err = w.add(c.GetAccountId(), nil, "invite.accept", &statev1.AuditTarget{Kind: AuditUser, Uuid: c.GetUserId(), Name: c.GetEmail()}, nil)
	case *raftv1.Command_RevokeInvite:
		c := op.RevokeInvite
		err = w.add(c.GetAccountId(), nil, "invite.revoke", &statev1.AuditTarget{Kind: AuditInvite, Uuid: c.GetInviteId()}, nil)
	}
	if err != nil {
		return err
	}
	return w.flush()
}

// addChange adds an entry for a change that changed something: none when
// diff is empty (an update to what was already there).
func (w *auditWriter) addChange(accountID, action string, target *statev1.AuditTarget, diff map[string][2]any) error {
	if len(diff) == 0 {
		return nil
	}
	return w.add(accountID, nil, action, target, diff)
}

// auditPutMonitors writes one entry per monitor a PutMonitors created or
// changed (create, update; apply for an apply's), none for an update that
// changed nothing.
func auditPutMonitors(w *auditWriter, ctx applyCtx, c *raftv1.PutMonitors, p *auditPrior) error {
	create, update := auditActionCreate, auditActionUpdate
	if c.GetApply() {
		create, update = auditActionApply, auditActionApply
	}
	for _, s := range c.GetCreates() {
		m, err := getMonitorIn(w.txn, ctx.values, s.GetUuid())
		if err != nil {
			return err
		}
		if err := w.add(c.GetAccountId(), nil, create, monitorTarget(m), monitorDiff(nil, m)); err != nil {
			return err
		}
	}
	for _, s := range c.GetUpdates() {
		m, err := getMonitorIn(w.txn, ctx.values, s.GetUuid())
		if err != nil {
			return err
		}
		if err := w.addChange(c.GetAccountId(), update, monitorTarget(m), monitorDiff(p.monitors[s.GetUuid()], m)); err != nil {
			return err
		}
	}
	return nil
}

// auditCreatedByPings writes an entry for each ping monitor the batch's
// pings created, by the ingest key that authenticated the ping.
func auditCreatedByPings(w *auditWriter, ctx applyCtx, b *raftv1.IngestBatch, res *raftv1.Result) error {
	for i, r := range res.GetEvents() {
		if !r.GetCreated() {
			continue
		}
		ev := b.GetEvents()[i]
		m, err := getMonitorIn(w.txn, ctx.values, r.GetMonitorUuid())
		if err != nil {
			return err
		}
		var actor *raftv1.Actor
		if id := ev.GetKeyId(); id != "" {
			key, err := keyByID(w.txn, ev.GetAccountId(), id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			actor = &raftv1.Actor{Type: ActorKey, Id: id, Name: key.GetName()}
		}
		if err := w.add(ev.GetAccountId(), actor, auditActionCreate, monitorTarget(m), monitorDiff(nil, m)); err != nil {
			return err
		}
	}
	return nil
}

// applyRecordSignIn checks a RecordSignIn: its entry is all it writes
// (auditAfter).
func applyRecordSignIn(txn *badger.Txn, cmd *raftv1.Command) (*raftv1.Result, error) {
	c := cmd.GetRecordSignIn()
	if c.GetAccountId() == "" || cmd.GetActor() == nil {
		return invalid("record sign-in: the account and the actor are required"), nil
	}
	if found, err := exists(txn, k(prefixAccount, c.GetAccountId())); err != nil || !found {
		return notFound("account %s not found", c.GetAccountId()), err
	}
	return ok(), nil
}

// keyByID reads the key of an account by its id.
func keyByID(txn *badger.Txn, accountID, id string) (*raftv1.Key, error) {
	hash, err := getRaw(txn, k(prefixKeyID, accountID, id))
	if err != nil {
		return nil, err
	}
	return readRecord(txn, kb(prefixKeyHash, hash), new(raftv1.Key))
}

// readRecord reads key into m and returns it.
func readRecord[M proto.Message](txn *badger.Txn, key []byte, m M) (M, error) {
	var zero M
	if err := getProto(txn, key, m); err != nil {
		return zero, err
	}
	return m, nil
}

func monitorTarget(m *statev1.Monitor) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditMonitor, Uuid: m.GetUuid(), Name: m.GetName()}
}

func keyTarget(key *raftv1.Key) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditKey, Uuid: key.GetId(), Name: key.GetName()}
}

func channelTarget(c *statev1.Channel) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditChannel, Uuid: c.GetId(), Name: c.GetName()}
}

func groupTarget(g *statev1.NotificationGroup) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditGroup, Uuid: g.GetId(), Name: g.GetName()}
}

func accountTarget(a *statev1.Account) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditAccount, Uuid: a.GetId(), Name: a.GetEmail()}
}

func windowTarget(win *raftv1.MaintenanceWindow) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditWindow, Uuid: win.GetId(), Name: win.GetName()}
}

// userTarget is the user who signed in or out: the actor.
func userTarget(a *raftv1.Actor) *statev1.AuditTarget {
	return &statev1.AuditTarget{Kind: AuditUser, Uuid: a.GetId(), Name: a.GetName()}
}
