// Command shard answers, with the apiserver's own code (k8s.io/apiserver's shard selector
// parser and k8s.io/apimachinery's hash and range test), which shard selectors match which
// objects, for the runtime's test that its shards are the apiserver's.
//
// Each input line is one of:
//
//	selector <text>  parse a shard selector; prints "ok" or "error <message>"
//	value <text>     an object whose uid and namespace are <text>; prints its hash
//	                 (0x and 16 hex digits) and the indices of the selectors matching it
//	hash <0x...>     a hash; prints the indices of the selectors whose ranges hold it
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/sharding"
)

type object struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

func (o *object) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

func main() {
	var selectors []apisharding.Selector
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		verb, arg, _ := strings.Cut(in.Text(), " ")
		switch verb {
		case "selector":
			sel, err := sharding.Parse(arg)
			if err != nil {
				fmt.Fprintf(out, "error %s\n", err)
				continue
			}
			selectors = append(selectors, sel)
			fmt.Fprintln(out, "ok")
		case "value":
			obj := &object{ObjectMeta: metav1.ObjectMeta{UID: types.UID(arg), Namespace: arg}}
			var matched []string
			for i, sel := range selectors {
				ok, err := sel.Matches(obj)
				if err != nil {
					fmt.Fprintf(os.Stderr, "selector %d: %s\n", i, err)
					os.Exit(1)
				}
				if ok {
					matched = append(matched, fmt.Sprint(i))
				}
			}
			fmt.Fprintf(out, "0x%s %s\n", apisharding.HashField(arg), strings.Join(matched, ","))
		case "hash":
			var matched []string
			for i, sel := range selectors {
				for _, req := range sel.Requirements() {
					if !apisharding.HexLess(arg, req.Start) && apisharding.HexLess(arg, req.End) {
						matched = append(matched, fmt.Sprint(i))
						break
					}
				}
			}
			fmt.Fprintln(out, strings.Join(matched, ","))
		default:
			fmt.Fprintf(os.Stderr, "unknown input line %q\n", in.Text())
			os.Exit(1)
		}
	}
}
