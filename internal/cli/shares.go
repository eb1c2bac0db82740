package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"lookout/internal/fairshare"
)

// shareFlag is a per-account share of some shared capacity (check
// workers, alert delivery slots): at most that many of one account's at
// once, 0 for no bound but the capacity itself.
type shareFlag int

// defineShare registers --name with the default share (8).
func defineShare(fs *flag.FlagSet, name, what string) *shareFlag {
	s := shareFlag(fairshare.DefaultShare)
	fs.Var(&s, name, fmt.Sprintf("at most this many of one account's %s at once, so that its targets that never answer delay no other account (0: no bound)", what))
	return &s
}

func (s *shareFlag) String() string { return fmt.Sprint(int(*s)) }

func (s *shareFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return errors.New("want a whole number, 0 or more")
	}
	*s = shareFlag(n)
	return nil
}

// option is the share as the Options of control/checks, control/alert
// and agent/runner take it: 0 there is the default, negative no bound.
func (s *shareFlag) option() int {
	switch {
	case s == nil:
		return 0 // not parsed: the default
	case *s == 0:
		return -1
	}
	return int(*s)
}
