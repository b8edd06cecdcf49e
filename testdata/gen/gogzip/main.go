// Prints, for each file named, the size gzip at Go's default level makes of it: what CAPRKE2's
// gzipUserData writes (compress/gzip NewWriter). rke2-payload's tests compare their estimate
// against these figures (testdata/go-gzip-sizes.json).
//
//	go run testdata/gen/gogzip/main.go FILE... > testdata/go-gzip-sizes.json
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
)

type entry struct {
	SHA256   string `json:"sha256"`
	Bytes    int    `json:"bytes"`
	GzipSize int    `json:"gzip_bytes"`
}

func main() {
	seen := map[string]entry{}
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(data)
		w.Close()
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:])
		seen[id] = entry{id, len(data), buf.Len()}
	}
	out := make([]entry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SHA256 < out[j].SHA256 })
	doc := map[string]any{"go": runtime.Version(), "sizes": out}
	text, _ := json.MarshalIndent(doc, "", "  ")
	fmt.Println(string(text))
}
