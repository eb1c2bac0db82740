package cli

import (
	"context"
	"flag"

	"lookout/internal/client"
)

// userCommands are the commands of lookout admin for an account's users.
func userCommands() []adminCommand {
	return []adminCommand{
		{name: "account user add", synopsis: "--account ID --email E --role owner|editor|viewer [--password P]", about: "add a user to an account", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			email := fs.String("email", "", "the user's e-mail address (required)")
			role := fs.String("role", "", "owner, editor or viewer (required)")
			password := fs.String("password", "", "panel password, at least 8 characters (default: none; the user signs in with single sign-on, or gets one with account user password)")
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				return c.AddUser(ctx, *account, client.AddUserRequest{Email: *email, Role: *role, Password: *password})
			})
		}},
		{name: "account user list", synopsis: "--account ID [--stale]", about: "list an account's users (owners first)", setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			stale := fs.Bool("stale", false, "answer from the node's own copy, even without a leader")
			return needAccount(account, func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				users, err := c.ListUsers(ctx, *account, *stale)
				return map[string]any{"users": users}, err
			})
		}},
		{name: "account user role", synopsis: "--account ID USER_ID owner|editor|viewer", about: "change a user's role (an account keeps at least one owner)", args: []string{"USER_ID", "ROLE"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.UpdateUser(ctx, *account, args[0], client.UpdateUserRequest{Role: &args[1]})
			})
		}},
		{name: "account user password", synopsis: "--account ID USER_ID --password P", about: "reset a user's panel password (--password \"\" removes it); the user's sessions end", args: []string{"USER_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			password := fs.String("password", "", "the new password, at least 8 characters; \"\" removes it (required)")
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				if !flagSet(fs, "password") {
					return nil, usageError{"--password is required (--password \"\" removes the password)"}
				}
				return c.UpdateUser(ctx, *account, args[0], client.UpdateUserRequest{Password: password})
			})
		}},
		{name: "account user remove", synopsis: "--account ID USER_ID", about: "remove a user: its panel sessions end on every node", args: []string{"USER_ID"}, setup: func(fs *flag.FlagSet) adminCommandFunc {
			account := accountFlag(fs)
			return needAccount(account, func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return nil, c.RemoveUser(ctx, *account, args[0])
			})
		}},
	}
}
