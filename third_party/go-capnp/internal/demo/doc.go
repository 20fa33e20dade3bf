// Package demo contains example tests.
package demo
