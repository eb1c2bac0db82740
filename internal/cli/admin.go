package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"lookout/internal/client"
)

// defaultAdminAddr is where lookout admin looks for a node by default.
const defaultAdminAddr = "http://127.0.0.1:8080"

// adminCommand is one command of lookout admin: its flags are set up on fs,
// and run, called after parsing, returns what to print (nil: nothing).
type adminCommand struct {
	name, synopsis, about string
	args                  []string // names of the positional arguments
	setup                 func(fs *flag.FlagSet) func(ctx context.Context, c *client.Admin, args []string) (any, error)
}

// adminCommands is the command table of lookout admin.
func adminCommands() []adminCommand {
	return append([]adminCommand{
		{name: "account create", synopsis: "--email E [--password P] [--plan-... flags]", about: "create an account with its personal keys", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			email := fs.String("email", "", "the account's e-mail address (required)")
			password := fs.String("password", "", "panel password, at least 8 characters (default: none)")
			plan := addPlanFlags(fs)
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				created, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: *email, Password: *password, Plan: plan.request()})
				if err != nil || *password != "" {
					return created, err
				}
				return noted{created, fmt.Sprintf("The account has no password: nobody can sign in to the panel as %s until one is set:\n"+
					"  lookout admin account password %s --password NEW", created.Email, created.ID)}, nil
			}
		}},
		{name: "account list", synopsis: "[--stale]", about: "list the accounts (id, e-mail, plan, created_at)", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			stale := fs.Bool("stale", false, "answer from the node's own copy, even without a leader")
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				accounts, err := c.AllAccounts(ctx, *stale)
				return map[string]any{"accounts": accounts}, err
			}
		}},
		{name: "account get", synopsis: "ID [--stale]", about: "show an account", args: []string{"ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			stale := fs.Bool("stale", false, "answer from the node's own copy, even without a leader")
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.GetAccount(ctx, args[0], *stale)
			}
		}},
		{name: "account password", synopsis: "ID --password P", about: "replace an account's panel password (--password \"\" removes it)", args: []string{"ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			password := fs.String("password", "", "the new panel password, at least 8 characters; \"\" removes it (required)")
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				set := false
				fs.Visit(func(f *flag.Flag) { set = set || f.Name == "password" })
				if !set {
					return nil, usageError{"--password is required (--password \"\" removes the password)"}
				}
				if err := c.SetPassword(ctx, args[0], *password); err != nil {
					return nil, err
				}
				return map[string]any{"id": args[0], "password_set": *password != ""}, nil
			}
		}},
		{name: "plan set", synopsis: "ID [--plan-... flags]", about: "replace an account's plan (flags left out take their defaults)", args: []string{"ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			plan := addPlanFlags(fs)
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				req := plan.request()
				if req == nil {
					req = &client.PlanRequest{}
				}
				p, err := c.SetPlan(ctx, args[0], *req)
				return map[string]any{"plan": p}, err
			}
		}},
		{name: "key create", synopsis: "--account ID --type ingest|management --name N [--scopes read,write,delete]", about: "create a named key", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			account := fs.String("account", "", "account id (required)")
			typ := fs.String("type", "", "ingest or management (required)")
			name := fs.String("name", "", "the key's name (required)")
			scopes := fs.String("scopes", "", "management keys: comma-separated scopes (default: read,write,delete)")
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				if *account == "" {
					return nil, usageError{"--account is required"}
				}
				req := client.CreateKeyRequest{Type: *typ, Name: *name}
				for _, s := range strings.Split(*scopes, ",") {
					if s = strings.TrimSpace(s); s != "" {
						req.Scopes = append(req.Scopes, s)
					}
				}
				return c.CreateKey(ctx, *account, req)
			}
		}},
		{name: "key list", synopsis: "--account ID [--stale]", about: "list an account's keys, with when each was made and last used", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			account := fs.String("account", "", "account id (required)")
			stale := fs.Bool("stale", false, "answer from the node's own copy, even without a leader")
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				if *account == "" {
					return nil, usageError{"--account is required"}
				}
				keys, err := c.ListKeys(ctx, *account, *stale)
				return map[string]any{"keys": keys}, err
			}
		}},
		{name: "key revoke", synopsis: "--account ID KEY_ID", about: "revoke a key at once", args: []string{"KEY_ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			account := fs.String("account", "", "account id (required)")
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				if *account == "" {
					return nil, usageError{"--account is required"}
				}
				return nil, c.RevokeKey(ctx, *account, args[0])
			}
		}},
		{name: "agent-token create", synopsis: "--region R --name N [--accounts ID[,ID]]", about: "create a token for the agents of a region", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			region := fs.String("region", "", "region name: a-z, 0-9 and - (required)")
			name := fs.String("name", "", "the token's name (required)")
			var accounts listFlag
			fs.Var(&accounts, "accounts", "ids of the only accounts the token's agents serve, comma-separated (default: every account)")
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) {
				return c.CreateAgentToken(ctx, client.CreateAgentTokenRequest{Region: *region, Name: *name, Accounts: accounts})
			}
		}},
		{name: "agent list", about: "list the edge agents and whether their regions are online (works without a leader)", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) { return c.Agents(ctx) }
		}},
		{name: "agent forget", synopsis: "AGENT_ID", about: "remove an agent's record (a retired agent; stop it first): a region left without agents is no longer judged", args: []string{"AGENT_ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return nil, c.ForgetAgent(ctx, args[0])
			}
		}},
		{name: "agent-token list", about: "list the agent tokens (never their secrets); agent list says which token each agent uses", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) { return c.AgentTokens(ctx) }
		}},
		{name: "agent-token rotate", synopsis: "TOKEN_ID", about: "make a new token of the same region and accounts that also forwards what the old one's agents buffered; revoke the old one once the agents use the new", args: []string{"TOKEN_ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return c.RotateAgentToken(ctx, args[0])
			}
		}},
		{name: "agent-token revoke", synopsis: "TOKEN_ID", about: "revoke an agent token: its agents are refused within 5 s", args: []string{"TOKEN_ID"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return nil, c.RevokeAgentToken(ctx, args[0])
			}
		}},
		{name: "cluster", about: "show the cluster as the node sees it (works without a leader)", setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, _ []string) (any, error) { return c.ClusterStatus(ctx) }
		}},
	}, append(append(userCommands(), channelCommands()...), snapshotCommands()...)...)
}

// runAdmin runs lookout admin with the process environment.
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runAdminEnv(ctx, args, os.Getenv, stdout, stderr)
}

// adminConn holds the flags every admin command takes, before or after the
// command's name. Their defaults are empty so that usage never shows the
// token taken from the environment.
type adminConn struct{ addr, token, caFile string }

func addConnFlags(fs *flag.FlagSet) *adminConn {
	c := &adminConn{}
	fs.StringVar(&c.addr, "addr", "", "a control node's URL (env LOOKOUT_ADDR, default "+defaultAdminAddr+")")
	fs.StringVar(&c.token, "admin-token", "", "the operator token (env LOOKOUT_ADMIN_TOKEN)")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM CA certificate(s) to verify an https:// node with, instead of the system roots (env LOOKOUT_CA_FILE)")
	return c
}

// firstSet returns the first non-empty value.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// runAdminEnv runs lookout admin, reading LOOKOUT_ADDR and
// LOOKOUT_ADMIN_TOKEN through getenv. The answer is printed to stdout as
// indented JSON; -h prints usage to stdout.
func runAdminEnv(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	commands := adminCommands()
	top := newAdminFlagSet("lookout admin")
	topConn := addConnFlags(top)
	if err := top.Parse(args); errors.Is(err, flag.ErrHelp) {
		return printAdminUsage(stdout, top, commands)
	} else if err != nil {
		return usageError{fmt.Sprintf("admin: %v (see lookout admin -h)", err)}
	}
	rest := top.Args()
	var cmd *adminCommand
	for i := range commands {
		words := strings.Fields(commands[i].name)
		if len(rest) >= len(words) && strings.Join(rest[:len(words)], " ") == commands[i].name {
			cmd, rest = &commands[i], rest[len(words):]
			break
		}
	}
	if cmd == nil {
		printAdminUsage(stderr, top, commands)
		if len(rest) == 0 {
			return usageError{"admin: no command given"}
		}
		return usageError{fmt.Sprintf("admin: unknown command %q", strings.Join(rest, " "))}
	}

	fs := newAdminFlagSet("lookout admin " + cmd.name)
	conn := addConnFlags(fs)
	run := cmd.setup(fs)
	positional, err := parseInterspersed(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: lookout admin %s %s\n\n%s.\n\nFlags:\n", cmd.name, cmd.synopsis, strings.ToUpper(cmd.about[:1])+cmd.about[1:])
		return printDefaults(stdout, fs)
	}
	if err != nil {
		return usageError{fmt.Sprintf("admin %s: %v (see -h)", cmd.name, err)}
	}
	if len(positional) != len(cmd.args) {
		return usageError{fmt.Sprintf("admin %s: want %d argument(s) %v, got %q (see -h)", cmd.name, len(cmd.args), cmd.args, positional)}
	}
	token := firstSet(conn.token, topConn.token, getenv("LOOKOUT_ADMIN_TOKEN"))
	if token == "" {
		return usageError{"no operator token: give --admin-token or set LOOKOUT_ADMIN_TOKEN"}
	}
	addr := firstSet(conn.addr, topConn.addr, getenv("LOOKOUT_ADDR"), defaultAdminAddr)
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	hc, err := httpClient(firstSet(conn.caFile, topConn.caFile, getenv("LOOKOUT_CA_FILE")), 0)
	if err != nil {
		return err
	}
	out, err := run(ctx, client.NewAdmin(addr, token, hc), positional)
	if err != nil {
		return fmt.Errorf("admin %s: %w", cmd.name, err)
	}
	note := ""
	if n, ok := out.(noted); ok {
		out, note = n.answer, n.note
	}
	if out == nil {
		return nil
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("print answer: %w", err)
	}
	if _, err = fmt.Fprintf(stdout, "%s\n", b); err != nil || note == "" {
		return err
	}
	_, err = fmt.Fprintf(stderr, "%s\n", note)
	return err
}

// noted is an answer with a note for people: the answer is printed as JSON
// to stdout, the note to stderr, so that programs reading the JSON are not
// disturbed.
type noted struct {
	answer any
	note   string
}

// newAdminFlagSet returns a flag set that prints nothing itself.
func newAdminFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func printAdminUsage(w io.Writer, top *flag.FlagSet, commands []adminCommand) error {
	var b bytes.Buffer
	b.WriteString("Usage: lookout admin [--addr URL] [--admin-token T] COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-20s %s\n", c.name, c.about)
	}
	b.WriteString("\nRun \"lookout admin COMMAND -h\" for a command's flags. Answers are printed as JSON.\n\nFlags:\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	return printDefaults(w, top)
}

func printDefaults(w io.Writer, fs *flag.FlagSet) error {
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	_, err := w.Write(b.Bytes())
	return err
}

// planFlags are the --plan-... flags. Only the flags given are sent; the
// service gives the others their defaults.
type planFlags struct {
	fs                                     *flag.FlagSet
	name                                   string
	monitorLimit, eventLimit, grace, burst int64
	creations                              int64
	configAsCode                           bool
	rate                                   float64
}

func addPlanFlags(fs *flag.FlagSet) *planFlags {
	p := &planFlags{fs: fs}
	fs.StringVar(&p.name, "plan-name", "default", "plan name")
	fs.Int64Var(&p.monitorLimit, "plan-monitor-limit", 0, "most monitors (default: no limit)")
	fs.Int64Var(&p.eventLimit, "plan-monthly-event-limit", 0, "most events per UTC month (default: no limit)")
	fs.Int64Var(&p.grace, "plan-quota-grace-seconds", 259200, "grace after the monthly limit is passed")
	fs.BoolVar(&p.configAsCode, "plan-config-as-code", true, "allow apply (monitors as code)")
	fs.Float64Var(&p.rate, "plan-ingest-rate", 10, "ingest events per second per key")
	fs.Int64Var(&p.burst, "plan-ingest-burst", 20, "ingest burst per key")
	fs.Int64Var(&p.creations, "plan-monitors-created-per-minute", 60, "most monitors pings may create in a minute")
	return p
}

// request is the plan given on the command line, nil when no plan flag was.
func (p *planFlags) request() *client.PlanRequest {
	var req client.PlanRequest
	given := false
	p.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "plan-name":
			req.Name = &p.name
		case "plan-monitor-limit":
			req.MonitorLimit = &p.monitorLimit
		case "plan-monthly-event-limit":
			req.MonthlyEventLimit = &p.eventLimit
		case "plan-quota-grace-seconds":
			req.QuotaGraceSeconds = &p.grace
		case "plan-config-as-code":
			req.ConfigAsCode = &p.configAsCode
		case "plan-ingest-rate":
			req.IngestRatePerSecond = &p.rate
		case "plan-ingest-burst":
			req.IngestBurst = &p.burst
		case "plan-monitors-created-per-minute":
			req.MonitorsCreatedPerMinute = &p.creations
		default:
			return
		}
		given = true
	})
	if !given {
		return nil
	}
	return &req
}
