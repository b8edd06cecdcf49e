// Renders Go text/template cases as Cluster API does, for the differential test
// (tests/go_differential.rs): reads a JSON array of cases from standard input, each
// {"template": "...", "data": <any JSON>, "naming": false}, and writes a JSON array of results,
// each {"output": "..."} or {"error": "..."}, in the same order.
//
// A patch template (naming false) is parsed as Cluster API's renderValueTemplate parses
// valueFrom.template: template.New("tpl").Funcs(sprig.HermeticTxtFuncMap()), no options. A
// naming template (naming true) as names.templateGenerator: Go's builtins alone and
// missingkey=error. The data is decoded into interface{}, so every JSON number is a float64.
//
// Built in GOPATH mode (GO111MODULE=off) against the Sprig sources Debian installs under
// /usr/share/gocode, hence the import path without /v3.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"text/template"

	sprig "github.com/Masterminds/sprig"
)

type input struct {
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	Naming   bool            `json:"naming"`
}

type result struct {
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

func render(c input) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	var data interface{}
	if len(c.Data) > 0 {
		if err := json.Unmarshal(c.Data, &data); err != nil {
			return "", fmt.Errorf("data: %w", err)
		}
	}
	var tpl *template.Template
	if c.Naming {
		tpl, err = template.New("template").Option("missingkey=error").Parse(c.Template)
	} else {
		tpl, err = template.New("tpl").Funcs(sprig.HermeticTxtFuncMap()).Parse(c.Template)
	}
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func main() {
	var cases []input
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading the cases:", err)
		os.Exit(2)
	}
	results := make([]result, len(cases))
	for i, c := range cases {
		out, err := render(c)
		if err != nil {
			msg := err.Error()
			results[i].Error = &msg
		} else {
			results[i].Output = &out
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "writing the results:", err)
		os.Exit(2)
	}
}
