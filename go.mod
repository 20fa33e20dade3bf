module github.com/gadgetd/gadgetd

go 1.26.8

require (
	capnproto.org/go/capnp/v3 v3.1.0-alpha.2
	github.com/BurntSushi/toml v1.6.0
	github.com/chromedp/chromedp v0.23.0
	github.com/gorilla/websocket v1.5.3
	github.com/tetratelabs/wazero v1.12.0
	go.etcd.io/bbolt v1.5.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.45.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/colega/zeropool v0.0.0-20230505084239-6fb4a4f75381 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/sync v0.20.0 // indirect
)

// go-capnp v3.1.0-alpha.2 with fixes for a capability leak and a lock left
// held, pending a release that has them: third_party/go-capnp/PATCHES.md.
replace capnproto.org/go/capnp/v3 => ./third_party/go-capnp
