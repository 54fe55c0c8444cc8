// Command pause is the sandbox ("pause") container of the test node's pods, and the default
// process of the test images: it holds the pod's namespaces, reaps orphans when it is PID 1,
// and exits 0 on SIGTERM or SIGINT so a pod stops at once instead of after its grace period.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
