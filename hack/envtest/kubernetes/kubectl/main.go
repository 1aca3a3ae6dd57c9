// Command kubectl is operator-gen's fallback kubectl, built from the same
// published modules as kube-apiserver for machines without one.
package main

import (
	"k8s.io/component-base/cli"
	kubectl "k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
