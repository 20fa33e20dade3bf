package server

// TestCompileCache is the compilation cache directory that every server
// this test binary opens shares, in package server's tests and server_test's
// alike (TestMain in helpers_test.go makes and removes it), as a real server
// shares its cache across restarts. Each server would otherwise compile the
// same guests again: tens of seconds each under -race. Tests of compiling
// itself give the guest bytes no other test uses, or a cache of their own.
var TestCompileCache string
