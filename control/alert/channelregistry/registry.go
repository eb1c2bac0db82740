// Package channelregistry builds the channel.Registry of every alert
// channel type: it is the one place a new channel is added (its own
// package under channel/, and its lines here: its factory and its secret
// field).
package channelregistry

import (
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/discord"
	"lookout/control/alert/channel/email"
	"lookout/control/alert/channel/opsgenie"
	"lookout/control/alert/channel/pagerduty"
	"lookout/control/alert/channel/shoutrrr"
	"lookout/control/alert/channel/slack"
	"lookout/control/alert/channel/teams"
	"lookout/control/alert/channel/telegram"
	"lookout/control/alert/channel/webhook"
)

// New returns a registry of all channel types whose channels get deps
// (the operator's SMTP server, the HTTP client, the clock).
func New(deps channel.Deps) *channel.Registry {
	return channel.NewRegistry(map[string]channel.Factory{
		email.Type:     email.New,
		slack.Type:     slack.New,
		discord.Type:   discord.New,
		teams.Type:     teams.New,
		pagerduty.Type: pagerduty.New,
		opsgenie.Type:  opsgenie.New,
		telegram.Type:  telegram.New,
		webhook.Type:   webhook.New,
		shoutrrr.Type:  shoutrrr.New,
	}, deps).WithSecrets(map[string]string{
		email.Type:     email.Secret,
		slack.Type:     slack.Secret,
		discord.Type:   discord.Secret,
		teams.Type:     teams.Secret,
		pagerduty.Type: pagerduty.Secret,
		opsgenie.Type:  opsgenie.Secret,
		telegram.Type:  telegram.Secret,
		webhook.Type:   webhook.Secret,
		shoutrrr.Type:  shoutrrr.Secret,
	})
}
