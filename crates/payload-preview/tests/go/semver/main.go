// Reads versions from standard input, one a line, and writes for each "ok" or the error, a line
// each, as Cluster API's admission webhooks judge a Machine's spec.version: a "v" prefix, then
// github.com/blang/semver/v4's Parse. For the differential test of the preview's check
// (src/manifest_checks/semver/go_differential.rs). Built in GOPATH mode (GO111MODULE=off)
// against the sources Debian installs under /usr/share/gocode (golang-github-blang-semver-dev).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		v := in.Text()
		if !strings.HasPrefix(v, "v") {
			fmt.Println("must start with v")
			continue
		}
		if _, err := semver.Parse(strings.TrimPrefix(v, "v")); err != nil {
			fmt.Println(strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Println("ok")
	}
}
