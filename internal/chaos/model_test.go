package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// op builds a history entry; ret -1 is an answer that was lost.
func op(client int, call, ret int64, in mInput, out mOutput) porcupine.Operation {
	if ret < 0 {
		out.Unknown = true
		ret = 1 << 40
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func apply(name, v string) mInput  { return mInput{Op: opApply, Name: name, Value: v} }
func put(name, u, v string) mInput { return mInput{Op: opPut, Name: name, UUID: u, Value: v} }
func del(name, u string) mInput    { return mInput{Op: opDelete, Name: name, UUID: u} }
func get(name, u string) mInput    { return mInput{Op: opGet, Name: name, UUID: u} }
func read(name string) mInput      { return mInput{Op: opRead, Name: name} }
func created(u string) mOutput     { return mOutput{Action: "create", UUID: u} }
func updated(u string) mOutput     { return mOutput{Action: "update", UUID: u} }
func found(u, v string) mOutput    { return mOutput{Found: true, UUID: u, Value: v} }
func ok() mOutput                  { return mOutput{Found: true} }
func notFound() mOutput            { return mOutput{} }

type historyCase struct {
	ops  []porcupine.Operation
	want porcupine.CheckResult
}

var cases = map[string]historyCase{
	"create then read": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(1, 20, 30, read("a"), found("u1", "v1")),
		op(1, 40, 50, get("a", "u1"), found("u1", "v1")),
	}, porcupine.Ok},
	"read before the create answered may see either": {[]porcupine.Operation{
		op(0, 0, 100, apply("a", "v1"), created("u1")),
		op(1, 10, 20, read("a"), notFound()),
		op(2, 30, 40, read("a"), found("u1", "v1")),
	}, porcupine.Ok},
	"stale read after an acknowledged update": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(0, 20, 30, put("a", "u1", "v2"), found("u1", "v2")),
		op(1, 40, 50, read("a"), found("u1", "v1")),
	}, porcupine.Illegal},
	"value never written": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(1, 20, 30, get("a", "u1"), found("u1", "v9")),
	}, porcupine.Illegal},
	"read goes back in time": {[]porcupine.Operation{
		op(0, 0, 100, apply("a", "v1"), created("u1")),
		op(1, 10, 20, read("a"), found("u1", "v1")),
		op(2, 30, 40, read("a"), notFound()),
	}, porcupine.Illegal},
	"deleted monitor still found": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(0, 20, 30, del("a", "u1"), ok()),
		op(1, 40, 50, get("a", "u1"), found("u1", "v1")),
	}, porcupine.Illegal},
	"two creates of one name without a delete": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(1, 20, 30, apply("a", "v2"), created("u2")),
	}, porcupine.Illegal},
	"update of a deleted monitor": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(0, 20, 30, del("a", "u1"), ok()),
		op(1, 40, 50, apply("a", "v2"), updated("u1")),
	}, porcupine.Illegal},
	"delete then create anew": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(0, 20, 30, del("a", "u1"), ok()),
		op(1, 40, 50, apply("a", "v2"), created("u2")),
		op(1, 60, 70, get("a", "u1"), notFound()),
		op(2, 60, 70, read("a"), found("u2", "v2")),
	}, porcupine.Ok},
	"unknown write may take effect later": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(0, 20, -1, put("a", "u1", "v2"), mOutput{}),
		op(1, 30, 40, read("a"), found("u1", "v1")),
		op(1, 50, 60, read("a"), found("u1", "v2")),
	}, porcupine.Ok},
	"unknown write may never take effect": {[]porcupine.Operation{
		op(0, 0, -1, apply("a", "v1"), mOutput{}),
		op(1, 30, 40, read("a"), notFound()),
	}, porcupine.Ok},
	"unknown create, its uuid learned from a read": {[]porcupine.Operation{
		op(0, 0, -1, apply("a", "v1"), mOutput{}),
		op(1, 30, 40, read("a"), found("u7", "v1")),
		op(1, 50, 60, get("a", "u8"), notFound()),
		op(2, 70, 80, del("a", "u7"), ok()),
		op(1, 90, 100, read("a"), notFound()),
	}, porcupine.Ok},
	"a learned uuid must stay": {[]porcupine.Operation{
		op(0, 0, -1, apply("a", "v1"), mOutput{}),
		op(1, 30, 40, read("a"), found("u7", "v1")),
		op(1, 50, 60, read("a"), found("u8", "v1")),
	}, porcupine.Illegal},
	"unknown delete of an unknown uuid": {[]porcupine.Operation{
		op(0, 0, -1, apply("a", "v1"), mOutput{}),
		op(2, 20, -1, del("a", "u7"), mOutput{}),
		op(1, 30, 40, read("a"), found("u9", "v1")),
	}, porcupine.Ok},
	"unchanged needs the value": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(1, 20, 30, apply("a", "v2"), mOutput{Action: "unchanged"}),
	}, porcupine.Illegal},
	"monitors are independent": {[]porcupine.Operation{
		op(0, 0, 10, apply("a", "v1"), created("u1")),
		op(1, 0, 10, apply("b", "v1"), created("u2")),
		op(2, 20, 30, read("a"), found("u1", "v1")),
		op(2, 20, 30, read("b"), found("u2", "v1")),
	}, porcupine.Ok},
}

// TestModel checks the register model on small histories, legal and
// not, so that a checker that accepts everything fails here.
func TestModel(t *testing.T) {
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(monitorModel(), c.ops, 0); got != c.want {
				t.Fatalf("verdict %s, want %s", got, c.want)
			}
		})
	}
}
