package wasmhost

// Internals the external tests check directly.
var (
	NativeStackBytes = nativeStackBytes
	TableBytes       = tableBytes
	MaxRetainedStack = uint64(maxRetainedStack)
)

// PollOneoff is WASI poll_oneoff on mem, as a guest would call it.
var PollOneoff = pollOneoffErrno

// Guest modules the tests assemble from WebAssembly text (wat_internal_test.go).
var (
	AssembleWAT = assembleWAT
	WATGuest    = watGuest
)
