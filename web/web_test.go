package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/web"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHealthzAnswersOK(t *testing.T) {
	resp := get(t, web.Handler(), "GET", "/healthz")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Fatalf("GET /healthz = %d %q, want 200 \"ok\\n\"", resp.StatusCode, body)
	}
}

// The home page may style itself and nothing else: a script or a request
// injected into it would be refused by the browser.
func TestTheHomePageMayRunNoScriptAndReachNothing(t *testing.T) {
	resp := get(t, web.Handler(), "GET", "/")
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(csp, "default-src 'none';") || strings.Contains(csp, "script-src") || strings.Contains(csp, "connect-src") {
		t.Fatalf("GET / = %d with Content-Security-Policy %q, want 200 and default-src 'none' with no script or connect source", resp.StatusCode, csp)
	}
}

func TestOnlyKnownPathsAndGETAreServed(t *testing.T) {
	for _, c := range []struct{ method, path string }{{"GET", "/nothing"}, {"POST", "/"}, {"DELETE", "/healthz"}} {
		if resp := get(t, web.Handler(), c.method, c.path); resp.StatusCode < 400 {
			t.Errorf("%s %s = %d, want an error", c.method, c.path, resp.StatusCode)
		}
	}
}
