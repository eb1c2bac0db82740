package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"lookout/internal/manifest"
)

// Bundle formats of export and apply.
const (
	formatYAML = "yaml"
	formatJSON = "json"
)

// bundleFormat is the format of a bundle file: --format when given, else
// by the file's extension (.json, .yaml, .yml), else YAML, which also reads
// JSON.
func bundleFormat(flagValue, file, cmd string) (string, error) {
	switch strings.ToLower(flagValue) {
	case formatYAML, "yml":
		return formatYAML, nil
	case formatJSON:
		return formatJSON, nil
	case "":
	default:
		return "", usageError{fmt.Sprintf("%s: --format %q: want yaml or json", cmd, flagValue)}
	}
	if strings.EqualFold(filepath.Ext(file), ".json") {
		return formatJSON, nil
	}
	return formatYAML, nil
}

const exportUsage = `Usage: lookout export [-o FILE] [--format yaml|json]

Print the account's monitors as a bundle (manifest_version and monitors,
without uuids, ordered by kind then name), which lookout apply takes back
unchanged. YAML unless --format json or FILE ends in .json. FILE is written
only once the whole bundle is in hand. --addr and --management-key also read
LOOKOUT_ADDR and LOOKOUT_MANAGEMENT_KEY.

Flags:
`

// runExport runs lookout export with the process environment.
func runExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runExportEnv(ctx, args, processManageEnv(getenv, stdout, stderr))
}

func runExportEnv(ctx context.Context, args []string, env manageEnv) error {
	fs, conn, err := manageFlags("export", env)
	if err != nil {
		return err
	}
	out := fs.String("o", "", "write the bundle to this file instead of stdout")
	format := fs.String("format", "", "yaml or json (default: by the extension of -o, else yaml)")
	positional, done, err := parseManage(fs, args, "export", exportUsage, env)
	if done || err != nil {
		return err
	}
	if len(positional) != 0 {
		return usageError{fmt.Sprintf("export: unexpected argument(s) %q (see lookout export -h)", positional)}
	}
	f, err := bundleFormat(*format, *out, "export")
	if err != nil {
		return err
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	b, err := c.Export(ctx)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	data, err := renderBundle(*b, f)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if *out == "" || *out == "-" {
		_, err := env.stdout.Write(data)
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(env.stderr, "Exported %d monitor(s) to %s.\n", len(b.Monitors), *out)
	return nil
}

// renderBundle renders b as YAML or indented JSON, ending in a newline.
func renderBundle(b manifest.Bundle, format string) ([]byte, error) {
	if b.Monitors == nil {
		b.Monitors = []manifest.Manifest{}
	}
	if format == formatYAML {
		return manifest.BundleToYAML(b)
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
