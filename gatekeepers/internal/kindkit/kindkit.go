package kindkit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/schema"
)

// Settings reads the settings of one configured service, [services.NAME],
// as decoded from TOML. Each getter records the key as known and the first
// error; Err reports that error, or a key that no getter asked for (a typo
// in the file is an error, not a setting silently ignored).
type Settings struct {
	kind, service string
	values        map[string]any
	known         map[string]bool
	err           error
}

// ReadSettings starts reading the settings of service, of kind.
func ReadSettings(kind, service string, values map[string]any) *Settings {
	return &Settings{kind: kind, service: service, values: values, known: map[string]bool{}}
}

func (s *Settings) fail(key, format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%s service %q: %s: %s", s.kind, s.service, key, fmt.Sprintf(format, args...))
	}
}

// String returns the string setting key, or def if it is absent.
func (s *Settings) String(key, def string) string {
	s.known[key] = true
	v, ok := s.values[key]
	if !ok {
		return def
	}
	str, ok := v.(string)
	if !ok {
		s.fail(key, "is a %T, not a string", v)
		return def
	}
	return str
}

// Bool returns the boolean setting key, or false if it is absent.
func (s *Settings) Bool(key string) bool {
	s.known[key] = true
	v, ok := s.values[key]
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		s.fail(key, "is a %T, not true or false", v)
	}
	return b
}

// Strings returns the list of strings key, or nil if it is absent.
func (s *Settings) Strings(key string) []string {
	s.known[key] = true
	v, ok := s.values[key]
	if !ok {
		return nil
	}
	switch list := v.(type) {
	case []string:
		return list
	case []any:
		out := make([]string, len(list))
		for i, e := range list {
			str, ok := e.(string)
			if !ok {
				s.fail(key, "element %d is a %T, not a string", i, e)
				return nil
			}
			out[i] = str
		}
		return out
	}
	s.fail(key, "is a %T, not a list of strings", v)
	return nil
}

// Err returns the first error of a getter, or else an error naming the
// settings no getter asked for.
func (s *Settings) Err() error {
	if s.err != nil {
		return s.err
	}
	var unknown, known []string
	for k := range s.values {
		if !s.known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	for k := range s.known {
		known = append(known, k)
	}
	sort.Strings(unknown)
	sort.Strings(known)
	return fmt.Errorf("%s service %q: unknown setting %s (the %s kind's settings are %s)",
		s.kind, s.service, strings.Join(unknown, ", "), s.kind, strings.Join(known, ", "))
}

// Describe answers Gatekeeper.describe for b, and gives calls its audit line.
func Describe(ctx context.Context, b gatekeepers.Binding, calls gatekeepers.Calls, call schema.Gatekeeper_describe) error {
	calls.Describe(ctx, fmt.Sprintf("describe binding %q (%s %s)", b.Name, b.Kind, b.Resource))
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	d, err := res.NewDescription()
	if err != nil {
		return err
	}
	return errors.Join(d.SetKind(b.Kind), d.SetResource(b.Resource), d.SetBindingName(b.Name))
}

// maxQuoted bounds what of a gadget's input an audit line or an error
// repeats.
const maxQuoted = 200

// Quote quotes s for an audit line or an error, cut to a length that cannot
// flood a log with a gadget's input.
func Quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}
