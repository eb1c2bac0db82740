package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// envName is the environment variable read for a flag: LOOKOUT_ and the
// flag's name in upper case with '-' as '_' (--admin-token ->
// LOOKOUT_ADMIN_TOKEN).
func envName(flagName string) string {
	return "LOOKOUT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseWithEnv parses args into fs after taking every flag's value from
// its environment variable when set; the command line wins over the
// environment.
func parseWithEnv(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
			}
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}

// isSet reports whether the flag name was given, on the command line or
// by its environment variable.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// listFlag is a comma-separated list flag (--join a,b).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set replaces the list with the comma-separated values of v.
func (l *listFlag) Set(v string) error {
	*l = nil
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// parseRole runs parse (the flags of lookout control or agent, whose flag
// set prints to the writer it is given) and routes what the flag set
// printed: -h's usage to stdout, and the answer is done (ok true, no
// error: exit 0); a mistake's message and usage to stderr.
func parseRole[C any](parse func(out io.Writer) (C, error), stdout, stderr io.Writer) (cfg C, ok bool, err error) {
	var out bytes.Buffer
	cfg, err = parse(&out)
	if errors.Is(err, flag.ErrHelp) {
		_, err = stdout.Write(out.Bytes())
		return cfg, false, err
	}
	if _, werr := stderr.Write(out.Bytes()); werr != nil && err == nil {
		err = werr
	}
	return cfg, err == nil, err
}
