package testcapnp

//go:generate capnp compile -I ../../../std -ogo test.capnp
