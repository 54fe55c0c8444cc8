//go:build !kubelet_without_context

package main

import (
	"context"

	"github.com/spf13/cobra"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// From Kubernetes 1.31 the kubelet's command takes a context.
func newKubeletCommand() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) }
