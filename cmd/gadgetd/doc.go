// Command gadgetd is the gadgetd server and its command-line client.
//
//	gadgetd serve [--config FILE] [--data DIR] [--http ADDR] [--capnp ADDR] [--tls-cert FILE --tls-key FILE] [--dev [--examples DIR]]
//	gadgetd user add NAME [--data DIR]
//	gadgetd blueprint build DIR | new NAME [DIR]
//	gadgetd ls | new BLUEPRINT [NAME] | rm ID
//	gadgetd share GADGET USER [--role ROLE] | unshare GADGET USER | shares GADGET
//	gadgetd link create GADGET [--role ROLE] [--expires DURATION] [--single-use] [--label L] | ls GADGET | revoke GADGET LINKID
//	gadgetd redeem SECRET
//	gadgetd blueprint ls | install DIR
//	gadgetd token ls | new [LABEL] [--expires DURATION] | revoke ID
//
// `gadgetd COMMAND --help` prints a command's usage and flags; the commands
// are the table in main.go. serve listens for Cap'n Proto on 127.0.0.1:7071
// and HTTP on 127.0.0.1:7070 and keeps its data in ./gadgetd-data; --config
// reads these and the server's limits from a TOML file (config.go;
// docs/gadgetd.example.toml shows every key), and flags override the file.
// Client commands reach the server at $GADGETD_ADDR (default
// 127.0.0.1:7071; tls://HOST:PORT for TLS, trusting $GADGETD_TLS_CA if set)
// with the token in $GADGETD_TOKEN, and print the server's errors without
// the RPC layer's prefixes.
package main
