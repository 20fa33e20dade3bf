//go:build !wasip1

// Command rawabi is a test gadget that speaks the guest ABI by hand; main.go
// says what it does.
package main

// rawabi runs only in the sandbox (GOOS=wasip1 GOARCH=wasm); elsewhere it is
// an empty program, so that `go vet ./...` and `go test ./...` build it.
func main() {}
