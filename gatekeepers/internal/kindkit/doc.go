// Package kindkit is what the implementations of gatekeeper kinds share:
// reading a service's settings (Settings) and answering the base
// interface's describe (Describe).
package kindkit
