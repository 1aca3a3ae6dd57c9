// Command flect-pluralize reads one word per line on stdin and prints, per line,
// the word, a tab, flect.Pluralize(word), a tab and flect.Singularize(word).
// The naming differential test (tests/tests/manifests/naming_flect.rs) runs it as the judge.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/gobuffalo/flect"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		w := in.Text()
		if w == "" {
			continue
		}
		fmt.Fprintf(out, "%s\t%s\t%s\n", w, flect.Pluralize(w), flect.Singularize(w))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "flect-pluralize:", err)
		os.Exit(1)
	}
}
