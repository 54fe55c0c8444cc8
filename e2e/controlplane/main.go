// Command controlplane is one binary that runs the parts of a real Kubernetes
// cluster the tests need: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet, kube-proxy and a version-matched kubectl. Each is the
// upstream entry point, unchanged.
package main

import (
	"fmt"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = "usage: controlplane etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubectl [flags...]"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	name := os.Args[1]
	// Each upstream command reads os.Args as if it had been invoked directly.
	os.Args = append([]string{name}, os.Args[2:]...)

	switch name {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kubelet":
		os.Exit(cli.Run(newKubeletCommand()))
	case "kube-proxy":
		os.Exit(cli.Run(proxy.NewProxyCommand()))
	case "kubectl":
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown component %q\n%s\n", name, usage)
		os.Exit(2)
	}
}
