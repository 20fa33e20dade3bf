package kindkit

import (
	"strings"
	"testing"
)

func TestSettingsReadTOMLValuesAndRefuseTheRest(t *testing.T) {
	s := ReadSettings("k", "svc", map[string]any{
		"name": "x", "on": true, "list": []any{"a", "b"}, "typed": []string{"c"},
	})
	if s.String("name", "def") != "x" || s.String("absent", "def") != "def" || !s.Bool("on") || s.Bool("off") {
		t.Error("a present or absent scalar was misread")
	}
	if l := s.Strings("list"); len(l) != 2 || l[1] != "b" {
		t.Errorf("list = %v", l)
	}
	if l := s.Strings("typed"); len(l) != 1 || l[0] != "c" {
		t.Errorf("typed = %v", l)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct {
		values map[string]any
		read   func(*Settings)
		want   string
	}{
		"a typo":              {map[string]any{"nmae": "x"}, func(s *Settings) { s.String("name", "") }, `k service "svc": unknown setting nmae (the k kind's settings are name)`},
		"a string for a bool": {map[string]any{"on": "yes"}, func(s *Settings) { s.Bool("on") }, "on: is a string, not true or false"},
		"a number in a list":  {map[string]any{"l": []any{"a", int64(1)}}, func(s *Settings) { s.Strings("l") }, "l: element 1 is a int64, not a string"},
		"a bool for a string": {map[string]any{"name": true}, func(s *Settings) { s.String("name", "") }, "name: is a bool, not a string"},
	} {
		s := ReadSettings("k", "svc", tc.values)
		tc.read(s)
		if err := s.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func TestQuoteBoundsWhatItRepeats(t *testing.T) {
	if q := Quote(strings.Repeat("x", 10_000)); len(q) > maxQuoted+10 {
		t.Errorf("Quote kept %d bytes", len(q))
	}
	if q := Quote("a\nb"); q != `"a\nb"` {
		t.Errorf("Quote = %s", q)
	}
}
