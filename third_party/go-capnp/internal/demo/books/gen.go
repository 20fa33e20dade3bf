//go:generate capnp compile -I ../../../std -ogo books.capnp

package books
