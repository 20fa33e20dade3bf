package fetch

import (
	"net/http"
	"reflect"
	"testing"
)

func TestGadgetHeadersKeepOnlyHeadersWithoutAuthority(t *testing.T) {
	in := http.Header{
		"Accept":              {"application/json"},
		"accept-language":     {"en"}, // not canonical: a gadget may build the map itself
		"Content-Type":        {"text/plain"},
		"If-None-Match":       {`"abc"`},
		"If-Modified-Since":   {"Mon, 01 Jan 2024 00:00:00 GMT"},
		"Range":               {"bytes=0-9"},
		"Authorization":       {"Bearer x"},
		"Cookie":              {"a=b"},
		"Proxy-Authorization": {"Basic x"},
		"Proxy-Connection":    {"keep-alive"},
		"Host":                {"evil.example.com"},
		"Forwarded":           {"for=1.2.3.4"},
		"X-Forwarded-For":     {"1.2.3.4"},
		"X-Forwarded-Host":    {"evil.example.com"},
		"X-Real-Ip":           {"1.2.3.4"},
		"Connection":          {"close"},
		"Keep-Alive":          {"timeout=5"},
		"Te":                  {"trailers"},
		"Trailer":             {"X"},
		"Transfer-Encoding":   {"chunked"},
		"Upgrade":             {"websocket"},
		"Content-Length":      {"5"},
		"X-Api-Key":           {"k"},
	}
	want := http.Header{
		"Accept":            {"application/json"},
		"Accept-Language":   {"en"},
		"Content-Type":      {"text/plain"},
		"If-None-Match":     {`"abc"`},
		"If-Modified-Since": {"Mon, 01 Jan 2024 00:00:00 GMT"},
		"Range":             {"bytes=0-9"},
	}
	got := GadgetHeaders(in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GadgetHeaders kept\n%v\nwant\n%v", got, want)
	}
	got["Accept"][0] = "changed"
	if in.Get("Accept") != "application/json" {
		t.Error("GadgetHeaders shares its values with its input")
	}
}
