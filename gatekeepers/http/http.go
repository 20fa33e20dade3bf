package http

// Design: a Service is immutable after NewService. Each binding's capability
// (a gatekeeper) holds its own fetch.Client, made for the binding's resource
// alone; fetch.Client is safe for concurrent use, so a gatekeeper serves
// concurrent calls without locks and starts no goroutines.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	nethttp "net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/http/httppb"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/fetch"
	"github.com/gadgetd/gadgetd/gatekeepers/internal/kindkit"
	"github.com/gadgetd/gadgetd/schema"
)

// KindName is the kind's name in the configuration and in bindings.
const KindName = "http"

// Option configures the services of the kind.
type Option func(*options)

type options struct {
	fetch []fetch.Option
}

// WithFetchOptions passes options (a resolver, a timeout, size bounds) to
// every fetch.Client the services make. Tests use it to resolve a name to
// 127.0.0.1.
func WithFetchOptions(opts ...fetch.Option) Option {
	return func(o *options) { o.fetch = append(o.fetch, opts...) }
}

// Kind returns the http kind, whose services are configured with opts.
func Kind(opts ...Option) gatekeepers.Kind {
	return gatekeepers.Kind{
		Name:   KindName,
		Schema: Schema(),
		Methods: map[string]gatekeepers.Effect{
			"describe": gatekeepers.Observe,
			"get":      gatekeepers.Observe,
			"head":     gatekeepers.Observe,
			"send":     gatekeepers.Act,
		},
		NewService: func(name string, cfg gatekeepers.ServiceConfig) (gatekeepers.Service, error) {
			s, err := NewService(name, cfg, opts...)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Details: details,
	}
}

// details shows the request an action will send: its method, URL and
// headers, and its body as text, or its size when it is not text.
func details(_ string, raw []byte) string {
	var r request
	if err := json.Unmarshal(raw, &r); err != nil {
		return "the request does not decode: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, displayURL(r.URL))
	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	switch {
	case len(r.Body) == 0:
	case utf8.Valid(r.Body):
		b.WriteString("\n")
		b.Write(r.Body)
	default:
		fmt.Fprintf(&b, "\n(%d bytes, not text)", len(r.Body))
	}
	return b.String()
}

// Service is one configured http service.
type Service struct {
	name     string
	prefixes []string      // canonical, as configured
	all      *fetch.Client // admits every configured prefix: Resource's check
	private  *fetch.Client // admits the allow_private prefixes; nil if none
	fetch    []fetch.Option
}

var _ gatekeepers.Service = (*Service)(nil)

// NewService builds the service configured as [services.name]: settings
// prefixes (a list of URL prefixes, required) and allow_private (a list of
// exact entries of prefixes).
func NewService(name string, cfg gatekeepers.ServiceConfig, opts ...Option) (*Service, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	set := kindkit.ReadSettings(KindName, name, cfg.Settings)
	configured := set.Strings("prefixes")
	allowPrivate := set.Strings("allow_private")
	if err := set.Err(); err != nil {
		return nil, err
	}
	if len(configured) == 0 {
		return nil, fmt.Errorf("http service %q: prefixes: at least one URL prefix is required", name)
	}
	s := &Service{name: name, fetch: o.fetch}
	var all []fetch.Prefix
	for _, p := range configured {
		canon, err := fetch.CanonicalPrefix(p)
		if err != nil {
			return nil, fmt.Errorf("http service %q: prefixes: %w", name, err)
		}
		s.prefixes = append(s.prefixes, canon)
		all = append(all, fetch.Prefix{URL: canon})
	}
	var private []fetch.Prefix
	for _, p := range allowPrivate {
		i := indexOf(configured, p)
		if i < 0 {
			return nil, fmt.Errorf("http service %q: allow_private: %s is not one of the service's prefixes (write it exactly as in prefixes)", name, kindkit.Quote(p))
		}
		private = append(private, fetch.Prefix{URL: s.prefixes[i], AllowPrivate: true})
	}
	var err error
	if s.all, err = fetch.New(all, o.fetch...); err != nil {
		return nil, fmt.Errorf("http service %q: %w", name, err)
	}
	if len(private) > 0 {
		if s.private, err = fetch.New(private, o.fetch...); err != nil {
			return nil, fmt.Errorf("http service %q: %w", name, err)
		}
	}
	return s, nil
}

func indexOf(list []string, s string) int {
	for i, e := range list {
		if e == s {
			return i
		}
	}
	return -1
}

// Resource checks that spec is a URL prefix under one of the service's
// prefixes and returns its canonical form.
func (s *Service) Resource(spec string) (string, error) {
	canon, err := fetch.CanonicalPrefix(spec)
	if err != nil {
		return "", fmt.Errorf("http service %q: resource %s is not a URL prefix: %w", s.name, kindkit.Quote(spec), err)
	}
	if err := s.all.Allows(canon); err != nil {
		return "", fmt.Errorf("http service %q: resource %s is not under the service's prefixes (%s)", s.name, kindkit.Quote(canon), strings.Join(s.prefixes, ", "))
	}
	return canon, nil
}

// client returns a fetch.Client whose only prefix is the binding's
// resource, after checking the resource against the configuration again.
func (s *Service) client(b gatekeepers.Binding) (*fetch.Client, error) {
	canon, err := s.Resource(b.Resource)
	if err != nil {
		return nil, err
	}
	allowPrivate := s.private != nil && s.private.Allows(canon) == nil
	return fetch.New([]fetch.Prefix{{URL: canon, AllowPrivate: allowPrivate}}, s.fetch...)
}

// Gatekeeper returns the httppb.Http capability of binding b.
func (s *Service) Gatekeeper(b gatekeepers.Binding, calls gatekeepers.Calls) capnp.Client {
	c, err := s.client(b)
	if err != nil {
		return capnp.ErrorClient(err)
	}
	return capnp.Client(httppb.Http_ServerToClient(&gatekeeper{binding: b, calls: calls, client: c}))
}

// request is send's payload: the request to send once approved, its
// headers already filtered.
type request struct {
	Method string         `json:"method"`
	URL    string         `json:"url"`
	Header nethttp.Header `json:"header,omitempty"`
	Body   []byte         `json:"body,omitempty"`
}

func (r *request) describe() string {
	return fmt.Sprintf("%s %s (%d bytes)", r.Method, displayURL(r.URL), len(r.Body))
}

// displayURL quotes a URL for an audit line or an error, with any password
// in it redacted.
func displayURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		raw = u.Redacted()
	}
	return kindkit.Quote(raw)
}

// maxOutcomeBody bounds the part of an applied request's response body
// that its Outcome keeps; the Outcome says when it was cut.
const maxOutcomeBody = 4 << 10

// result is an applied action's Outcome.Result.
type result struct {
	Status        int    `json:"status"`
	URL           string `json:"url"`
	ContentType   string `json:"contentType,omitempty"`
	BodyBytes     int    `json:"bodyBytes"`
	Body          []byte `json:"body,omitempty"` // the first maxOutcomeBody bytes
	BodyTruncated bool   `json:"bodyTruncated,omitempty"`
}

// Apply sends the request that send queued.
func (s *Service) Apply(ctx context.Context, b gatekeepers.Binding, a gatekeepers.Action) (gatekeepers.Outcome, error) {
	var req request
	if err := json.Unmarshal(a.Payload, &req); err != nil {
		return gatekeepers.Outcome{}, fmt.Errorf("http: action %s: the payload does not decode: %v", a.ID, err)
	}
	c, err := s.client(b)
	if err != nil {
		return gatekeepers.Outcome{}, err
	}
	resp, err := c.Do(ctx, &fetch.Request{Method: req.Method, URL: req.URL, Header: req.Header, Body: req.Body})
	if err != nil {
		return gatekeepers.Outcome{Describe: req.describe() + ": not sent or not answered"}, err
	}
	r := result{Status: resp.Status, URL: resp.URL, ContentType: resp.Header.Get("Content-Type"), BodyBytes: len(resp.Body), Body: resp.Body}
	if len(r.Body) > maxOutcomeBody {
		r.Body, r.BodyTruncated = r.Body[:maxOutcomeBody], true
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return gatekeepers.Outcome{}, err
	}
	o := gatekeepers.Outcome{Describe: fmt.Sprintf("%s: %d %s", req.describe(), resp.Status, nethttp.StatusText(resp.Status)), Result: raw}
	if resp.Status < 200 || resp.Status > 299 {
		return o, fmt.Errorf("http: %s: the server answered %d", req.describe(), resp.Status)
	}
	return o, nil
}

// gatekeeper serves httppb.Http for one binding.
type gatekeeper struct {
	binding gatekeepers.Binding
	calls   gatekeepers.Calls
	client  *fetch.Client // whose only prefix is the binding's resource
}

func (g *gatekeeper) Describe(ctx context.Context, call schema.Gatekeeper_describe) error {
	return kindkit.Describe(ctx, g.binding, g.calls, call)
}

func (g *gatekeeper) Get(ctx context.Context, call httppb.Http_get) error {
	resp, err := g.observe(ctx, nethttp.MethodGet, call.Args())
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewResponse()
	if err != nil {
		return err
	}
	return setResponse(out, resp)
}

func (g *gatekeeper) Head(ctx context.Context, call httppb.Http_head) error {
	resp, err := g.observe(ctx, nethttp.MethodHead, call.Args())
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	out, err := res.NewResponse()
	if err != nil {
		return err
	}
	return setResponse(out, resp)
}

// requestArgs are the arguments of get and head.
type requestArgs interface {
	Url() (string, error)
	Headers() (httppb.Header_List, error)
}

// observe makes a GET or HEAD.
func (g *gatekeeper) observe(ctx context.Context, method string, args requestArgs) (*fetch.Response, error) {
	rawURL, err := args.Url()
	if err != nil {
		return nil, err
	}
	g.calls.Describe(ctx, method+" "+displayURL(rawURL))
	header, err := gadgetHeaders(args.Headers)
	if err != nil {
		return nil, err
	}
	if err := g.check(rawURL); err != nil {
		return nil, err
	}
	return g.client.Do(ctx, &fetch.Request{Method: method, URL: rawURL, Header: header})
}

func setResponse(out httppb.Response, resp *fetch.Response) error {
	out.SetStatus(uint16(resp.Status))
	var n int
	for _, vs := range resp.Header {
		n += len(vs)
	}
	list, err := out.NewHeaders(int32(n))
	if err != nil {
		return err
	}
	i := 0
	for _, name := range slices.Sorted(maps.Keys(resp.Header)) {
		for _, v := range resp.Header[name] {
			if err := errors.Join(list.At(i).SetName(name), list.At(i).SetValue(v)); err != nil {
				return err
			}
			i++
		}
	}
	return errors.Join(out.SetBody(resp.Body), out.SetUrl(resp.URL))
}

// sendMethods are the methods send queues: the side effects.
var sendMethods = map[string]bool{
	nethttp.MethodPost: true, nethttp.MethodPut: true, nethttp.MethodPatch: true, nethttp.MethodDelete: true,
}

func (g *gatekeeper) Send(ctx context.Context, call httppb.Http_send) error {
	p := call.Args()
	method, err := p.Method()
	if err != nil {
		return err
	}
	rawURL, err := p.Url()
	if err != nil {
		return err
	}
	body, err := p.Body()
	if err != nil {
		return err
	}
	req := request{Method: method, URL: rawURL, Body: body}
	g.calls.Describe(ctx, req.describe())
	if req.Header, err = gadgetHeaders(p.Headers); err != nil {
		return err
	}
	// Refuse now what Apply could never send, rather than queue it for a
	// human to approve in vain.
	if !sendMethods[method] {
		return fmt.Errorf("http: send: method %s is not POST, PUT, PATCH or DELETE (use get or head to read)", kindkit.Quote(method))
	}
	if len(body) > fetch.DefaultMaxRequestBytes {
		return fmt.Errorf("http: send: the body is %d bytes, more than %d: %w", len(body), fetch.DefaultMaxRequestBytes, fetch.ErrTooLarge)
	}
	if err := g.check(rawURL); err != nil {
		return err
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return err
	}
	a, err := g.calls.Queue(ctx, payload)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	pa, err := res.NewAction()
	if err != nil {
		return err
	}
	return errors.Join(pa.SetActionId(a.ID), pa.SetDescription(req.describe()))
}

// check refuses a URL outside the binding's resource, or with credentials:
// fetch would strip them, but a gadget that puts them there is refused
// outright, so that it learns it cannot pass credentials of its own.
func (g *gatekeeper) check(rawURL string) error {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		return fmt.Errorf("http: URL %s carries credentials (user:password@), which a gatekeeper never sends", displayURL(rawURL))
	}
	return g.client.Allows(rawURL)
}

// gadgetHeaders reads the gadget's headers and keeps those it may set.
func gadgetHeaders(get func() (httppb.Header_List, error)) (nethttp.Header, error) {
	list, err := get()
	if err != nil {
		return nil, err
	}
	h := nethttp.Header{}
	for i := 0; i < list.Len(); i++ {
		name, err := list.At(i).Name()
		if err != nil {
			return nil, err
		}
		value, err := list.At(i).Value()
		if err != nil {
			return nil, err
		}
		h.Add(name, value)
	}
	return fetch.GadgetHeaders(h), nil
}
