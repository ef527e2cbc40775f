package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Example: `  perfscen version`,
		Short:   "Print perfscen's version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(e.stdout, "perfscen %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
