package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// get sends a request as GitHub's clients do and returns the answer.
func get(t *testing.T, method, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "githubtest-test")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestLinkHeadersUseRepositoryIDsAndThoseURLsAreServed(t *testing.T) {
	srv := NewServer("tok")
	defer srv.Close()
	repo := srv.AddRepo("octo", "hello")
	for range 5 {
		repo.AddIssue(Issue{Title: "x"})
	}
	resp, _ := get(t, "GET", srv.URL+"/repos/octo/hello/issues?per_page=2&page=2", "tok", "")
	link := resp.Header.Get("Link")
	for _, rel := range []string{`page=1&per_page=2>; rel="prev"`, `page=3&per_page=2>; rel="next"`, `page=3&per_page=2>; rel="last"`, `page=1&per_page=2>; rel="first"`} {
		if !strings.Contains(link, rel) {
			t.Errorf("Link %q lacks %s", link, rel)
		}
	}
	next := strings.TrimPrefix(strings.SplitN(strings.Split(link, ", ")[1], ">", 2)[0], "<")
	if !strings.HasPrefix(next, srv.URL+"/repositories/") || !strings.Contains(next, "per_page=2") {
		t.Fatalf("next = %q, want GitHub's /repositories/ID form keeping per_page", next)
	}
	resp, body := get(t, "GET", next, "tok", "")
	var issues []map[string]any
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &issues) != nil || len(issues) != 1 {
		t.Errorf("GET next: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Link") == "" || strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
		t.Errorf("last page Link = %q", resp.Header.Get("Link"))
	}
}

func TestGitHubsErrorAnswers(t *testing.T) {
	srv := NewServer("tok")
	defer srv.Close()
	srv.AddRepo("octo", "hello").AddIssue(Issue{Title: "x"})
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
		message                   string
	}{
		{"GET", "/repos/octo/hello/issues", "", "", 401, "Requires authentication"},
		{"GET", "/repos/octo/hello/issues", "wrong", "", 401, "Bad credentials"},
		{"GET", "/repos/octo/other/issues", "tok", "", 404, "Not Found"},
		{"GET", "/repos/octo/hello/issues/2", "tok", "", 404, "Not Found"},
		{"GET", "/repos/octo/hello/issues/01", "tok", "", 404, "Not Found"},
		{"GET", "/repos/octo/hello/pulls/1", "tok", "", 404, "Not Found"},
		{"DELETE", "/repos/octo/hello/issues/1", "tok", "", 404, "Not Found"},
		{"POST", "/repos/octo/hello/issues", "tok", "{", 400, "Problems parsing JSON"},
		{"POST", "/repos/octo/hello/issues", "tok", `{"title":""}`, 422, "Validation Failed"},
		{"POST", "/repos/octo/hello/issues", "tok", `{"body":"no title"}`, 422, "Validation Failed"},
		{"GET", "/repos/octo/hello/contents/x?ref=nope", "tok", "", 404, "No commit found for the ref nope"},
	} {
		resp, body := get(t, tc.method, srv.URL+tc.path, tc.token, tc.body)
		var e errorBody
		if resp.StatusCode != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Message != tc.message || e.Status != strconv.Itoa(tc.status) {
			t.Errorf("%s %s: %d %s; want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.message)
		}
	}
	if srv.Writes() != 4 {
		t.Errorf("Writes = %d, want 4", srv.Writes())
	}
	if _, _, _, ok := srv.repos[0].Issue(2); ok {
		t.Error("a refused POST created an issue")
	}
}

func TestARequestWithoutUserAgentIsForbidden(t *testing.T) {
	srv := NewServer("tok")
	defer srv.Close()
	srv.AddRepo("octo", "hello")
	req, _ := http.NewRequest("GET", srv.URL+"/repos/octo/hello/issues", nil)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("User-Agent", "") // net/http sends none when it is set empty
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
}
