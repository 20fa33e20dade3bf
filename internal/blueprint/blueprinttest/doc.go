// Package blueprinttest builds the example blueprints and guest modules that
// tests need, once per test binary, so `go test ./...` works on a clean
// checkout without `make examples`. Builds go to a private temporary
// directory; call RemoveAll from TestMain to delete it.
package blueprinttest
