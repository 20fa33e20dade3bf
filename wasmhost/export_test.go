package wasmhost

// Internals the external tests check directly.
var (
	NativeStackBytes = nativeStackBytes
	TableBytes       = tableBytes
	MaxRetainedStack = uint64(maxRetainedStack)
)
