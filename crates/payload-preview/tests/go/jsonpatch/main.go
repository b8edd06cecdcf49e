// Applies JSON patches (RFC 6902) as Cluster API applies a ClusterClass patch's jsonPatches, for
// the differential test of the library's applier (src/topology/patch/go_differential.rs): reads
// a JSON array of cases from standard input, each {"doc": <JSON>, "patch": [operations]}, and
// writes a JSON array of results, each {"doc": <JSON>} or {"error": "..."}, in the same order.
//
// The applier is github.com/evanphx/json-patch/v5 with its default options (DecodePatch, then
// Apply), as Cluster API's topology controller calls it. Built in GOPATH mode
// (GO111MODULE=off) against the sources Debian installs under /usr/share/gocode.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

type input struct {
	Doc   json.RawMessage `json:"doc"`
	Patch json.RawMessage `json:"patch"`
}

type result struct {
	Doc   json.RawMessage `json:"doc,omitempty"`
	Error *string         `json:"error,omitempty"`
}

func apply(c input) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	patch, err := jsonpatch.DecodePatch(c.Patch)
	if err != nil {
		return nil, err
	}
	return patch.Apply(c.Doc)
}

func main() {
	var cases []input
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading the cases:", err)
		os.Exit(2)
	}
	results := make([]result, len(cases))
	for i, c := range cases {
		out, err := apply(c)
		if err == nil && !json.Valid(out) {
			err = fmt.Errorf("the patched document is not JSON: %q", out)
		}
		if err != nil {
			msg := err.Error()
			results[i].Error = &msg
		} else {
			results[i].Doc = out
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "writing the results:", err)
		os.Exit(2)
	}
}
