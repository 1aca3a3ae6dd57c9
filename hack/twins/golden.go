package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The key of a reference to a shared node in golden.json.
const refKey = "$shared"

// Nodes shorter than this (as compact JSON) stay inline.
const minShared = 200

// golden turns controller-gen's CRD files in dir into one JSON file: each CRD by file name, with
// every object node of at least minShared bytes that occurs in it stored once under "shared" by
// its content hash and referenced as {"$shared": hash}. Lossless: expanding the references gives
// controller-gen's documents back (key order aside). Without the sharing, the PodSpec that tens
// of fields repeat makes 20 MB of YAML.
func golden(dir, out string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		fail("no CRD files in " + dir)
	}
	sort.Strings(files)
	shared := map[string]json.RawMessage{}
	var docs bytes.Buffer
	docs.WriteString("{\n\"documents\": {\n")
	for i, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			fail(err.Error())
		}
		var doc any
		if err := yaml.Unmarshal(text, &doc); err != nil {
			fail(f + ": " + err.Error())
		}
		compact, err := json.Marshal(share(doc, shared))
		if err != nil {
			fail(err.Error())
		}
		name, _ := json.Marshal(filepath.Base(f))
		sep := ","
		if i == len(files)-1 {
			sep = ""
		}
		fmt.Fprintf(&docs, "%s: %s%s\n", name, compact, sep)
	}
	docs.WriteString("},\n\"shared\": {\n")
	keys := make([]string, 0, len(shared))
	for k := range shared {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&docs, "%q: %s%s\n", k, shared[k], sep)
	}
	docs.WriteString("}\n}\n")
	write(out, docs.String())
}

// share replaces large object nodes, innermost first, by references into shared.
func share(v any, shared map[string]json.RawMessage) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			if strings.HasPrefix(k, refKey) {
				fail("a CRD uses the key " + refKey)
			}
			m[k] = share(x, shared)
		}
		text, err := json.Marshal(m)
		if err != nil {
			fail(err.Error())
		}
		if len(text) < minShared {
			return m
		}
		sum := sha256.Sum256(text)
		h := hex.EncodeToString(sum[:8])
		shared[h] = text
		return map[string]any{refKey: h}
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = share(x, shared)
		}
		return out
	default:
		return v
	}
}
