package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The history's operations, each on one monitor (by name) of the history
// account. The model is a register per monitor name whose value is
// "absent" or (uuid, display_name): the Management API's contract is that
// writes are committed through raft before they answer and that reads
// (without ?stale=true) are consistent, whichever node answers, so every
// operation must take effect at one instant between its call and its
// answer. Writes whose outcome is unknown (a timeout, a reset, a 5xx) may
// take effect at any instant after their call, or never: they are given
// a return time after every other operation. Reads whose outcome is
// unknown are left out (they change nothing).
const (
	opApply  = "apply"  // POST /monitors/apply with one entry: create or update by name
	opPut    = "put"    // PUT /monitors/{uuid}
	opDelete = "delete" // DELETE /monitors/{uuid}?confirm=true
	opGet    = "get"    // GET /monitors/{uuid}
	opRead   = "read"   // one monitor of GET /monitors (the list is split by name)
)

// mInput is an operation as sent.
type mInput struct {
	Op    string
	Name  string
	UUID  string // put, delete, get
	Value string // apply, put: the display_name written
}

// mOutput is an operation's answer.
type mOutput struct {
	Unknown bool   // no answer that tells what happened
	Found   bool   // put, delete, get, read: 2xx (false: 404 or absent from the list)
	Action  string // apply: create, update or unchanged
	UUID    string // apply (create, update), get, read
	Value   string // get, read: the display_name read
}

// mState is one monitor name's register. UUID "" with Exists is a monitor
// created by a write whose answer was lost: its uuid is not known until a
// read shows it.
type mState struct {
	Exists bool
	UUID   string
	Value  string
}

// uuidMatches tells whether the register may hold the monitor uuid.
func (s mState) uuidMatches(uuid string) bool { return s.Exists && (s.UUID == "" || s.UUID == uuid) }

// step is the sequential specification: the states the register may be
// in after the operation, none when the answer is impossible.
func step(s mState, in mInput, out mOutput) []mState {
	switch in.Op {
	case opApply:
		switch {
		case out.Unknown:
			return []mState{{Exists: true, UUID: s.UUID, Value: in.Value}}
		case out.Action == "create" && !s.Exists:
			return []mState{{Exists: true, UUID: out.UUID, Value: in.Value}}
		case out.Action == "update" && s.uuidMatches(out.UUID):
			// An update is planned from a read and committed later;
			// another writer may have set the same value in between,
			// so the value before it is not checked.
			return []mState{{Exists: true, UUID: out.UUID, Value: in.Value}}
		case out.Action == "unchanged" && s.Exists && s.Value == in.Value:
			return []mState{s}
		}
		return nil
	case opPut:
		written := mState{Exists: true, UUID: in.UUID, Value: in.Value}
		switch {
		case out.Unknown && s.Exists && s.UUID == in.UUID:
			return []mState{written}
		case out.Unknown && s.uuidMatches(in.UUID): // uuid not known: either
			return []mState{written, s}
		case out.Unknown:
			return []mState{s}
		case out.Found && s.uuidMatches(in.UUID):
			return []mState{written}
		case !out.Found && !(s.Exists && s.UUID == in.UUID):
			return []mState{s}
		}
		return nil
	case opDelete:
		gone := mState{}
		switch {
		case out.Unknown && s.Exists && s.UUID == in.UUID:
			return []mState{gone}
		case out.Unknown && s.uuidMatches(in.UUID):
			return []mState{gone, s}
		case out.Unknown:
			return []mState{s}
		case out.Found && s.uuidMatches(in.UUID):
			return []mState{gone}
		case !out.Found && !(s.Exists && s.UUID == in.UUID):
			return []mState{s}
		}
		return nil
	case opGet:
		switch {
		case out.Found && s.uuidMatches(in.UUID) && s.Value == out.Value:
			return []mState{{Exists: true, UUID: in.UUID, Value: s.Value}}
		case !out.Found && !(s.Exists && s.UUID == in.UUID):
			return []mState{s}
		}
		return nil
	case opRead:
		switch {
		case out.Found && s.uuidMatches(out.UUID) && s.Value == out.Value:
			return []mState{{Exists: true, UUID: out.UUID, Value: s.Value}}
		case !out.Found && !s.Exists:
			return []mState{s}
		}
		return nil
	}
	return nil
}

// monitorModel is the porcupine model: one register per monitor name.
func monitorModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byName := map[string][]porcupine.Operation{}
			var names []string
			for _, op := range history {
				name := op.Input.(mInput).Name
				if _, ok := byName[name]; !ok {
					names = append(names, name)
				}
				byName[name] = append(byName[name], op)
			}
			var out [][]porcupine.Operation
			for _, n := range names {
				out = append(out, byName[n])
			}
			return out
		},
		Init: func() []interface{} { return []interface{}{mState{}} },
		Step: func(state, input, output interface{}) []interface{} {
			var out []interface{}
			for _, s := range step(state.(mState), input.(mInput), output.(mOutput)) {
				out = append(out, s)
			}
			return out
		},
		Equal:             func(a, b interface{}) bool { return a.(mState) == b.(mState) },
		DescribeOperation: describeOp,
		DescribeState: func(state interface{}) string {
			s := state.(mState)
			if !s.Exists {
				return "absent"
			}
			return fmt.Sprintf("%s=%q", short(s.UUID), s.Value)
		},
	}
	return nm.ToModel()
}

func describeOp(input, output interface{}) string {
	in, out := input.(mInput), output.(mOutput)
	var res string
	switch {
	case out.Unknown:
		res = "unknown"
	case in.Op == opApply:
		res = out.Action + " " + short(out.UUID)
	case !out.Found:
		res = "not found"
	case in.Op == opGet || in.Op == opRead:
		res = fmt.Sprintf("%s=%q", short(out.UUID), out.Value)
	default:
		res = "ok"
	}
	arg := in.Name
	if in.UUID != "" {
		arg += " " + short(in.UUID)
	}
	if in.Value != "" {
		arg += fmt.Sprintf(" %q", in.Value)
	}
	return fmt.Sprintf("%s(%s) -> %s", in.Op, arg, res)
}

// short is the first 8 characters of a uuid ("?" when unknown).
func short(uuid string) string {
	if uuid == "" {
		return "?"
	}
	if len(uuid) > 8 {
		return uuid[:8]
	}
	return uuid
}
