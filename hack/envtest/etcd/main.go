// Command etcd is operator-gen's build wrapper around etcd's server entry
// point, so it can be built from published modules alone.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
