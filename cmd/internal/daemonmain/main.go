// Package daemonmain is the main of the daemons, cmd/commander and
// cmd/soldier: SIGTERM and SIGINT end run's context, SIGHUP goes to its
// reload channel, and the process exits with run's code.
package daemonmain

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs run with the process's arguments and streams, then exits.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer, reload <-chan os.Signal) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup)
	stop()
	os.Exit(code)
}
