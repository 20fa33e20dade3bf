// Package blueprinttest builds the blueprints and guest modules that tests
// need (the kernel's test counter, internal/testcounter, and the examples),
// once per test binary, so `go test ./...` works on a clean checkout without
// `make examples`. Builds go to a private temporary directory; call RemoveAll
// from TestMain to delete it.
package blueprinttest
