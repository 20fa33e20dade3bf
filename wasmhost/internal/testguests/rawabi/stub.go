//go:build !wasip1

package main

// rawabi runs only in the sandbox (GOOS=wasip1 GOARCH=wasm); elsewhere it is
// an empty program, so that `go vet ./...` and `go test ./...` build it.
func main() {}
