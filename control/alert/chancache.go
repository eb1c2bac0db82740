package alert

import (
	"sync"

	"lookout/control/alert/channel"
)

// maxCachedChannels bounds the channels the dispatcher keeps; a full
// cache starts over.
const maxCachedChannels = 4096

// madeChannel is what Dispatcher.channel made of a delivery's channel_ref:
// the channel and its type, or the permanent error that gives the
// delivery up (the channel is gone, or its config cannot be used).
type madeChannel struct {
	typ string
	ch  channel.Channel
	err error
}

// chanCache keeps the channels the dispatcher made, by account and
// channel_ref, for as long as the state's channels generation
// (state.Store.ChannelsGeneration) has not moved: no channel or
// notification group of any account was written since they were read.
// Without it every delivery reads its channel (or its account's
// notification groups) and parses the config again. The channels are
// shared by the attempts under way: a Channel's Send keeps no state of its
// own between calls.
type chanCache struct {
	mu   sync.Mutex
	gen  uint64
	made map[string]madeChannel
}

// get returns what was made of ref in the account, if it was read at
// generation gen (the current one).
func (c *chanCache) get(gen uint64, accountID, ref string) (madeChannel, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return madeChannel{}, false
	}
	m, ok := c.made[accountID+"\x00"+ref]
	return m, ok
}

// put keeps m, made from reads that followed the reading of generation
// gen. A cache of another generation is dropped first (an older m is not
// kept: what it was read from may have changed since).
func (c *chanCache) put(gen uint64, accountID, ref string, m madeChannel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case gen < c.gen:
		return
	case gen > c.gen || c.made == nil || len(c.made) >= maxCachedChannels:
		c.gen, c.made = gen, map[string]madeChannel{}
	}
	c.made[accountID+"\x00"+ref] = m
}
