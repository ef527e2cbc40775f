// Command perfscen runs declarative inference-server performance scenarios
// and gates CI on their verdicts.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfscen/perfscen/internal/wakeprobe"
)

func main() {
	// Runs record the machine's wake-up delays (the disturbance rule's
	// signal); tests, which call run in fake-clock bubbles, do not.
	wakeprobe.Enable()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
