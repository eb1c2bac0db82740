package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"lookout/internal/client"
)

// The commands of lookout admin for alert channels and notification
// groups. An update reads the channel or group first and changes only what
// its flags give: a secret read back masked is kept by the service.

// adminCommandFunc is what an adminCommand's setup returns.
type adminCommandFunc = func(ctx context.Context, c *client.Admin, args []string) (any, error)

// accountFlag adds the --account flag every command here takes.
func accountFlag(fs *flag.FlagSet) *string {
	return fs.String("account", "", "account id (required)")
}

// needAccount runs run once --account is given.
func needAccount(account *string, run adminCommandFunc) adminCommandFunc {
	return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
		if *account == "" {
			return nil, usageError{"--account is required"}
		}
		return run(ctx, c, args)
	}
}

// flagSet tells whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseGroupChannels reads --channels.
func parseGroupChannels(raw string) ([]client.Channel, error) {
	var out []client.Channel
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, usageError{fmt.Sprintf("--channels must be a JSON array of {type, name, config} or {channel_id} objects: %v", err)}
	}
	return out, nil
}

// parseConfig reads --config.
func parseConfig(raw string) (json.RawMessage, error) {
	if !json.Valid([]byte(raw)) || !strings.HasPrefix(strings.TrimSpace(raw), "{") {
		return nil, usageError{"--config must be a JSON object"}
	}
	return json.RawMessage(raw), nil
}

const channelsHelp = `JSON array of channels: {"type":"slack","name":"...","config":{...}} or {"channel_id":"ID"} (an alert channel of the account)`

// channelCommands are the group and channel commands of lookout admin.
func channelCommands() []adminCommand {
	return []adminCommand{
		{name: "group create", synopsis: "--account ID --name N [--channels JSON]", about: "create a notification group", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			name := fs.String("name", "", "the group's name (required)")
			channels := fs.String("channels", "[]", channelsHelp)
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				list, err := parseGroupChannels(*channels)
				if err != nil {
					return nil, err
				}
				return c.CreateNotificationGroup(ctx, *account, client.CreateNotificationGroupRequest{Name: *name, Channels: list})
			})
		}},
		{name: "group list", synopsis: "--account ID", about: "list an account's notification groups (secrets masked)", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				return c.ListNotificationGroups(ctx, *account)
			})
		}},
		{name: "group get", synopsis: "--account ID GROUP_ID", about: "show a notification group (secrets masked)", args: []string{"GROUP_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.GetNotificationGroup(ctx, *account, args[0])
			})
		}},
		{name: "group update", synopsis: "--account ID GROUP_ID [--name N] [--channels JSON]", about: "change a notification group (flags left out keep their values)", args: []string{"GROUP_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			name := fs.String("name", "", "the group's new name (a group that monitors name keeps its name)")
			channels := fs.String("channels", "", channelsHelp+"; masked secrets as read are kept")
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				var list []client.Channel
				if flagSet(fs, "channels") {
					var err error
					if list, err = parseGroupChannels(*channels); err != nil {
						return nil, err
					}
				}
				g, err := c.GetNotificationGroup(ctx, *account, args[0])
				if err != nil {
					return nil, err
				}
				req := client.CreateNotificationGroupRequest{Name: g.Name, Channels: g.Channels}
				if flagSet(fs, "name") {
					req.Name = *name
				}
				if flagSet(fs, "channels") {
					req.Channels = list
				}
				return c.UpdateNotificationGroup(ctx, *account, args[0], req)
			})
		}},
		{name: "group delete", synopsis: "--account ID GROUP_ID", about: "delete a notification group that no monitor names", args: []string{"GROUP_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return nil, c.DeleteNotificationGroup(ctx, *account, args[0])
			})
		}},
		{name: "channel create", synopsis: "--account ID --type T --name N --config JSON [--default=false]", about: "create an alert channel (a default channel unless --default=false)", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			typ := fs.String("type", "", "email, slack, discord, teams, pagerduty, opsgenie, telegram, webhook or shoutrrr (required)")
			name := fs.String("name", "", "the channel's name (required)")
			config := fs.String("config", "", `the type's config as a JSON object, e.g. '{"webhook_url":"https://hooks.slack.com/..."}' (required)`)
			isDefault := fs.Bool("default", true, "send it the alerts of monitors without a notification group")
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				cfg, err := parseConfig(*config)
				if err != nil {
					return nil, err
				}
				return c.CreateChannel(ctx, *account, client.CreateChannelRequest{Type: *typ, Name: *name, Config: cfg, Default: isDefault})
			})
		}},
		{name: "channel list", synopsis: "--account ID", about: "list an account's alert channels (secrets masked)", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				return c.ListChannels(ctx, *account)
			})
		}},
		{name: "channel get", synopsis: "--account ID CHANNEL_ID", about: "show an alert channel (its secret masked)", args: []string{"CHANNEL_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.GetChannel(ctx, *account, args[0])
			})
		}},
		{name: "channel update", synopsis: "--account ID CHANNEL_ID [--type T] [--name N] [--config JSON] [--default=true|false]", about: "change an alert channel (flags left out keep their values)", args: []string{"CHANNEL_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			typ := fs.String("type", "", "the channel's new type (give --config too)")
			name := fs.String("name", "", "the channel's new name")
			config := fs.String("config", "", "the new config as a JSON object; a masked secret as read is kept")
			isDefault := fs.Bool("default", true, "send it the alerts of monitors without a notification group")
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				var cfg json.RawMessage
				if flagSet(fs, "config") {
					var err error
					if cfg, err = parseConfig(*config); err != nil {
						return nil, err
					}
				}
				ch, err := c.GetChannel(ctx, *account, args[0])
				if err != nil {
					return nil, err
				}
				req := client.CreateChannelRequest{Type: ch.Type, Name: ch.Name, Config: ch.Config}
				if flagSet(fs, "type") {
					req.Type = *typ
				}
				if flagSet(fs, "name") {
					req.Name = *name
				}
				if cfg != nil {
					req.Config = cfg
				}
				if flagSet(fs, "default") {
					req.Default = isDefault
				}
				return c.UpdateChannel(ctx, *account, args[0], req)
			})
		}},
		{name: "channel delete", synopsis: "--account ID CHANNEL_ID", about: "delete an alert channel; its alerts not yet delivered are given up", args: []string{"CHANNEL_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return nil, c.DeleteChannel(ctx, *account, args[0])
			})
		}},
		{name: "channel deliveries", synopsis: "--account ID CHANNEL_ID", about: "show an alert channel's last 100 deliveries", args: []string{"CHANNEL_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.ChannelDeliveries(ctx, *account, args[0])
			})
		}},
		{name: "channel test", synopsis: "--account ID CHANNEL_ID", about: "send a test message through an alert channel", args: []string{"CHANNEL_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.TestChannel(ctx, *account, args[0])
			})
		}},
	}
}
