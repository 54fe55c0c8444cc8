//go:build kubelet_without_context

package main

import (
	"github.com/spf13/cobra"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// Kubernetes 1.30's kubelet command takes no context (versions/1.30/tags sets this build tag).
func newKubeletCommand() *cobra.Command { return kubelet.NewKubeletCommand() }
