// Command lookout is the one binary of Lookout: control-plane nodes
// (lookout control), edge agents, and the client commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"lookout/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lookout:", err)
		os.Exit(cli.ExitCode(err))
	}
}
