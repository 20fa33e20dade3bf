package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/gadgetd/gadgetd/gatekeepers"
	httpkind "github.com/gadgetd/gadgetd/gatekeepers/http"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/callstest"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
)

// origin is a loopback HTTP server that logs the requests it receives.
type origin struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
	body map[string]string // the body of each request, by method and path
}

func newOrigin(t *testing.T, handler http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{body: map[string]string{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.seen = append(o.seen, r)
		o.body[r.Method+" "+r.URL.Path] = string(b)
		o.mu.Unlock()
		if handler != nil {
			handler(w, r)
			return
		}
		w.Header().Set("X-Seen", r.Method+" "+r.URL.Path)
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) requests() []*http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*http.Request(nil), o.seen...)
}

func (o *origin) port() string {
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	return port
}

// binding binds resource of a service configured with settings, and
// returns the binding's capability and its calls.
func binding(t *testing.T, settings map[string]any, resource string, opts ...httpkind.Option) (httppb.Http, *callstest.Calls, *httpkind.Service, gatekeepers.Binding) {
	t.Helper()
	svc, err := httpkind.NewService("api", gatekeepers.ServiceConfig{Settings: settings}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := svc.Resource(resource)
	if err != nil {
		t.Fatal(err)
	}
	b := gatekeepers.Binding{GadgetID: "g1", OwnerID: "u1", Name: "api", Service: "api", Kind: httpkind.KindName, Resource: canon}
	calls := callstest.New(b)
	client := httppb.Http(svc.Gatekeeper(b, calls))
	t.Cleanup(client.Release)
	return client, calls, svc, b
}

// response is what a test looks at of a get's answer.
type response struct {
	status int
	body   string
}

func get(ctx context.Context, c httppb.Http, url string, headers map[string]string) (response, error) {
	f, release := c.Get(ctx, func(p httppb.Http_get_Params) error {
		if err := p.SetUrl(url); err != nil {
			return err
		}
		return setHeaders(p.NewHeaders, headers)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return response{}, err
	}
	resp, err := res.Response()
	if err != nil {
		return response{}, err
	}
	body, err := resp.Body()
	return response{status: int(resp.Status()), body: string(body)}, err
}

func send(ctx context.Context, c httppb.Http, method, url string, headers map[string]string, body string) (actionID string, err error) {
	f, release := c.Send(ctx, func(p httppb.Http_send_Params) error {
		if err := p.SetMethod(method); err != nil {
			return err
		}
		if err := p.SetUrl(url); err != nil {
			return err
		}
		if err := p.SetBody([]byte(body)); err != nil {
			return err
		}
		return setHeaders(p.NewHeaders, headers)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	a, err := res.Action()
	if err != nil {
		return "", err
	}
	return a.ActionId()
}

func setHeaders(newList func(int32) (httppb.Header_List, error), headers map[string]string) error {
	list, err := newList(int32(len(headers)))
	if err != nil {
		return err
	}
	i := 0
	for k, v := range headers {
		if err := errors.Join(list.At(i).SetName(k), list.At(i).SetValue(v)); err != nil {
			return err
		}
		i++
	}
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func loopbackSettings(prefix string) map[string]any {
	return map[string]any{"prefixes": []any{prefix}, "allow_private": []any{prefix}}
}

func TestGetReachesTheBindingsPrefixWithTheGadgetsHeadersFiltered(t *testing.T) {
	o := newOrigin(t, nil)
	c, calls, _, _ := binding(t, loopbackSettings(o.URL+"/api/"), o.URL+"/api/v1")
	resp, err := get(context.Background(), c, o.URL+"/api/v1/items?x=1", map[string]string{
		"Accept": "text/plain", "Authorization": "Bearer gadget-guess", "Cookie": "s=1", "X-Forwarded-For": "1.2.3.4",
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != 200 || resp.body != "hello from /api/v1/items" {
		t.Fatalf("got %+v", resp)
	}
	reqs := o.requests()
	if len(reqs) != 1 {
		t.Fatalf("the origin saw %d requests, want 1", len(reqs))
	}
	h := reqs[0].Header
	if h.Get("Accept") != "text/plain" || h.Get("Authorization") != "" || h.Get("Cookie") != "" || h.Get("X-Forwarded-For") != "" {
		t.Errorf("the origin saw headers %v: only Accept should have been forwarded", h)
	}
	if d := calls.Descriptions(); len(d) != 1 || !strings.Contains(d[0], "GET") || !strings.Contains(d[0], "/api/v1/items") {
		t.Errorf("audit lines %q", d)
	}
}

// Each way out of the binding's resource is refused, and the server that
// would have answered sees nothing.
func TestTheBindingReachesOnlyItsResource(t *testing.T) {
	other := newOrigin(t, nil) // another port on the same host
	var o *origin
	o = newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/redirect-out":
			http.Redirect(w, r, o.URL+"/api/v2/secret", http.StatusFound)
		case "/api/v1/redirect-port":
			http.Redirect(w, r, other.URL+"/api/v1/x", http.StatusFound)
		default:
			io.WriteString(w, "reached "+r.URL.Path)
		}
	})
	// The service grants all of /api/ on both servers; the binding only /api/v1/ of o.
	settings := map[string]any{
		"prefixes":      []any{o.URL + "/api/", other.URL + "/api/"},
		"allow_private": []any{o.URL + "/api/", other.URL + "/api/"},
	}
	c, calls, _, _ := binding(t, settings, o.URL+"/api/v1/")
	ctx := context.Background()

	for name, url := range map[string]string{
		"another prefix":             o.URL + "/api/v2/secret",
		"a sibling by dot segment":   o.URL + "/api/v1/../v2/secret",
		"a longer segment":           o.URL + "/api/v10/x",
		"another port":               other.URL + "/api/v1/x",
		"userinfo in the URL":        "http://user:pw@" + o.Listener.Addr().String() + "/api/v1/x",
		"a redirect elsewhere":       o.URL + "/api/v1/redirect-out",
		"a redirect to another port": o.URL + "/api/v1/redirect-port",
	} {
		t.Run(name, func(t *testing.T) {
			before := len(o.requests())
			_, err := get(ctx, c, url, nil)
			if err == nil {
				t.Fatalf("GET %s succeeded", url)
			}
			if name == "userinfo in the URL" {
				if !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "pw") {
					t.Errorf("error %q should refuse the credentials without repeating them", err)
				}
			} else if !strings.Contains(err.Error(), fetch.ErrOutsidePrefixes.Error()) {
				t.Errorf("error %q is not the prefix refusal", err)
			}
			for _, r := range o.requests()[before:] {
				if !strings.HasPrefix(r.URL.Path, "/api/v1/redirect") {
					t.Errorf("the origin was reached at %s", r.URL.Path)
				}
			}
		})
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the server on another port saw %d requests", n)
	}
	for _, d := range calls.Descriptions() {
		if strings.Contains(d, "pw") {
			t.Errorf("the audit line %q repeats the URL's password", d)
		}
	}
	// And send is refused in the same way, before anything is queued.
	if _, err := send(ctx, c, "POST", o.URL+"/api/v2/x", nil, "x"); err == nil {
		t.Error("send to another prefix was queued")
	}
	if _, err := send(ctx, c, "POST", "http://user:pw@"+o.Listener.Addr().String()+"/api/v1/x", nil, "x"); err == nil {
		t.Error("send with userinfo was queued")
	}
	if n := len(calls.Actions()); n != 0 {
		t.Errorf("%d actions were queued", n)
	}
}

// A name that resolves to 127.0.0.1 under a prefix the operator did not
// allow private addresses for is refused on the address dialled.
func TestANameResolvingToLoopbackIsRefused(t *testing.T) {
	o := newOrigin(t, nil)
	toLoopback := fetch.WithResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	prefix := "http://rebind.example:" + o.port() + "/api/"
	c, _, _, _ := binding(t, map[string]any{"prefixes": []any{prefix}}, prefix, httpkind.WithFetchOptions(toLoopback))
	_, err := get(context.Background(), c, prefix+"x", nil)
	if err == nil || !strings.Contains(err.Error(), fetch.ErrPrivateAddress.Error()) {
		t.Fatalf("GET through a name resolving to 127.0.0.1: err = %v, want the private-address refusal", err)
	}
	if n := len(o.requests()); n != 0 {
		t.Errorf("the loopback server saw %d requests", n)
	}

	// The same prefix, allowed by the operator, reaches it: the refusal was
	// the address, not the name.
	c, _, _, _ = binding(t, map[string]any{"prefixes": []any{prefix}, "allow_private": []any{prefix}}, prefix, httpkind.WithFetchOptions(toLoopback))
	if _, err := get(context.Background(), c, prefix+"x", nil); err != nil {
		t.Fatalf("with allow_private: %v", err)
	}
}

// allow_private is per configured prefix: a binding under a prefix that is
// not listed does not reach loopback, even when another prefix of the same
// service is.
func TestAllowPrivateCoversOnlyTheListedPrefix(t *testing.T) {
	o := newOrigin(t, nil)
	settings := map[string]any{
		"prefixes":      []any{o.URL + "/open/", o.URL + "/closed/"},
		"allow_private": []any{o.URL + "/open/"},
	}
	c, _, _, _ := binding(t, settings, o.URL+"/closed/")
	if _, err := get(context.Background(), c, o.URL+"/closed/x", nil); err == nil || !strings.Contains(err.Error(), fetch.ErrPrivateAddress.Error()) {
		t.Fatalf("err = %v, want the private-address refusal", err)
	}
	if n := len(o.requests()); n != 0 {
		t.Errorf("the loopback server saw %d requests", n)
	}
}

func TestSendIsQueuedNotSentAndApplySendsItOnce(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "created")
	})
	c, calls, svc, b := binding(t, loopbackSettings(o.URL+"/api/"), o.URL+"/api/")
	ctx := context.Background()
	id, err := send(ctx, c, "POST", o.URL+"/api/items", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer x"}, `{"a":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(o.requests()); n != 0 {
		t.Fatalf("send reached the server (%d requests) before approval", n)
	}
	actions := calls.Actions()
	if len(actions) != 1 || actions[0].ID != id || actions[0].State != gatekeepers.Pending {
		t.Fatalf("actions = %+v, want one pending with id %q", actions, id)
	}
	if d := actions[0].Describe; !strings.Contains(d, "POST") || !strings.Contains(d, "/api/items") {
		t.Errorf("the action is described as %q", d)
	}

	out, err := svc.Apply(ctx, b, actions[0])
	if err != nil {
		t.Fatal(err)
	}
	reqs := o.requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || o.body["POST /api/items"] != `{"a":1}` {
		t.Fatalf("the server saw %d requests (%v), bodies %v", len(reqs), reqs, o.body)
	}
	if h := reqs[0].Header; h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "" {
		t.Errorf("the applied request carried headers %v", h)
	}
	var r struct {
		Status int    `json:"status"`
		Body   []byte `json:"body"`
	}
	if err := json.Unmarshal(out.Result, &r); err != nil || r.Status != 201 || string(r.Body) != "created" {
		t.Errorf("outcome %q %s: %+v %v", out.Describe, out.Result, r, err)
	}
	if !strings.Contains(out.Describe, "201") {
		t.Errorf("outcome described as %q", out.Describe)
	}
}

func TestApplyReportsAnErrorStatusAsAFailure(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusConflict) })
	c, calls, svc, b := binding(t, loopbackSettings(o.URL+"/"), o.URL+"/")
	if _, err := send(context.Background(), c, "DELETE", o.URL+"/x", nil, ""); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Apply(context.Background(), b, calls.Actions()[0])
	if err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(out.Describe, "409") {
		t.Fatalf("Apply = %q, %v; want a failure naming 409", out.Describe, err)
	}
}

func TestSendRefusesWhatCouldNeverBeSent(t *testing.T) {
	o := newOrigin(t, nil)
	c, calls, _, _ := binding(t, loopbackSettings(o.URL+"/"), o.URL+"/")
	ctx := context.Background()
	for _, method := range []string{"GET", "HEAD", "CONNECT", "TRACE", "OPTIONS", "post", ""} {
		if _, err := send(ctx, c, method, o.URL+"/x", nil, ""); err == nil || !strings.Contains(err.Error(), "method") {
			t.Errorf("send %q: err = %v, want a method refusal", method, err)
		}
	}
	big := strings.Repeat("x", fetch.DefaultMaxRequestBytes+1)
	if _, err := send(ctx, c, "POST", o.URL+"/x", nil, big); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("send of %d bytes: err = %v", len(big), err)
	}
	if n := len(calls.Actions()); n != 0 {
		t.Errorf("%d actions were queued", n)
	}
	if n := len(o.requests()); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

func TestHeadAnswersWithoutABody(t *testing.T) {
	o := newOrigin(t, nil)
	c, _, _, _ := binding(t, loopbackSettings(o.URL+"/"), o.URL+"/")
	f, release := c.Head(context.Background(), func(p httppb.Http_head_Params) error { return p.SetUrl(o.URL + "/x") })
	defer release()
	resp, err := must(f.Struct()).Response()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status() != 200 || len(must(resp.Body())) != 0 {
		t.Errorf("HEAD: %d, %d bytes", resp.Status(), len(must(resp.Body())))
	}
	headers := must(resp.Headers())
	found := false
	for i := 0; i < headers.Len(); i++ {
		if must(headers.At(i).Name()) == "X-Seen" && must(headers.At(i).Value()) == "HEAD /x" {
			found = true
		}
	}
	if !found || o.requests()[0].Method != "HEAD" {
		t.Errorf("HEAD did not reach the server as a HEAD")
	}
}

func TestDescribeNamesTheBinding(t *testing.T) {
	o := newOrigin(t, nil)
	c, calls, _, b := binding(t, loopbackSettings(o.URL+"/"), o.URL+"/api")
	f, release := c.Describe(context.Background(), nil)
	defer release()
	d, err := must(f.Struct()).Description()
	if err != nil {
		t.Fatal(err)
	}
	if must(d.Kind()) != "http" || must(d.Resource()) != o.URL+"/api/" || must(d.BindingName()) != b.Name {
		t.Errorf("describe = %s", d)
	}
	if len(calls.Descriptions()) != 1 {
		t.Errorf("describe was not given an audit line")
	}
}

func TestConfigurationErrorsAreClear(t *testing.T) {
	for name, tc := range map[string]struct {
		settings map[string]any
		want     string
	}{
		"no prefixes":           {map[string]any{}, "at least one URL prefix"},
		"a prefix not a URL":    {map[string]any{"prefixes": []any{"ftp://x/"}}, "scheme"},
		"a prefix with a query": {map[string]any{"prefixes": []any{"https://x/a?b=1"}}, "query"},
		"prefixes not a list":   {map[string]any{"prefixes": "https://x/"}, "not a list"},
		"allow_private not a configured prefix": {
			map[string]any{"prefixes": []any{"https://x/a/"}, "allow_private": []any{"https://x/"}}, "not one of the service's prefixes"},
		"an unknown setting": {map[string]any{"prefixes": []any{"https://x/"}, "allow_privat": []any{}}, "unknown setting allow_privat"},
	} {
		_, err := httpkind.NewService("api", gatekeepers.ServiceConfig{Settings: tc.settings})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"api"`) {
			t.Errorf("%s: err = %v, want one naming the service and %q", name, err, tc.want)
		}
	}
}

func TestResourceMustBeAPrefixUnderTheService(t *testing.T) {
	svc, err := httpkind.NewService("api", gatekeepers.ServiceConfig{Settings: map[string]any{"prefixes": []any{"https://api.example.com/v1/"}}})
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"HTTPS://API.example.com:443/v1/widgets": "https://api.example.com/v1/widgets/",
		"https://api.example.com/v1":             "https://api.example.com/v1/",
		"https://api.example.com/v2/":            "not under the service's prefixes",
		"https://api.example.com/v10/":           "not under the service's prefixes",
		"https://api.example.com:8443/v1/":       "not under the service's prefixes",
		"http://api.example.com/v1/":             "not under the service's prefixes",
		"https://evil.example/v1/":               "not under the service's prefixes",
		"https://u:p@api.example.com/v1/":        "not a URL prefix",
		"https://api.example.com/v1/../v2/":      "not a URL prefix",
		"https://api.example.com/v1/?q":          "not a URL prefix",
	} {
		got, err := svc.Resource(spec)
		if strings.HasPrefix(want, "https://") {
			if err != nil || got != want {
				t.Errorf("Resource(%q) = %q, %v; want %q", spec, got, err, want)
			}
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resource(%q) = %q, %v; want an error saying %q", spec, got, err, want)
		}
	}
}

// A binding made when the configuration granted its resource reaches
// nothing once the operator no longer does.
func TestABindingOutsideTheConfigurationReachesNothing(t *testing.T) {
	o := newOrigin(t, nil)
	svc, err := httpkind.NewService("api", gatekeepers.ServiceConfig{Settings: loopbackSettings(o.URL + "/now/")})
	if err != nil {
		t.Fatal(err)
	}
	b := gatekeepers.Binding{Name: "old", Kind: "http", Resource: o.URL + "/then/"}
	c := httppb.Http(svc.Gatekeeper(b, callstest.New(b)))
	defer c.Release()
	if _, err := get(context.Background(), c, o.URL+"/then/x", nil); err == nil || !strings.Contains(err.Error(), "not under the service's prefixes") {
		t.Errorf("err = %v", err)
	}
	a := gatekeepers.Action{ID: "a", Payload: []byte(`{"method":"POST","url":"` + o.URL + `/then/x"}`)}
	if _, err := svc.Apply(context.Background(), b, a); err == nil {
		t.Error("Apply of an action of a binding outside the configuration succeeded")
	}
	if n := len(o.requests()); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}
