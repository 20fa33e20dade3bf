package rpcguard

// ConnErrorBurst is connErrorBurst, for the tests of package rpcguard_test.
const ConnErrorBurst = connErrorBurst
