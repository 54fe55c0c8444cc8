// Command helm is the upstream Helm command line, built from Go modules so the chart
// tests need no downloaded release binary. Only the entry point is ours.
package main

import (
	"errors"
	"log/slog"
	"os"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/kube"
)

func main() {
	// The field manager Helm's server-side apply records, independent of the binary's name.
	kube.ManagedFieldsManager = "helm"

	root, err := helmcmd.NewRootCmd(os.Stdout, os.Args[1:], helmcmd.SetupLogging)
	if err != nil {
		slog.Warn("command failed", slog.Any("error", err))
		os.Exit(1)
	}
	if err := root.Execute(); err != nil {
		var commandError helmcmd.CommandError
		if errors.As(err, &commandError) {
			os.Exit(commandError.ExitCode)
		}
		os.Exit(1)
	}
}
