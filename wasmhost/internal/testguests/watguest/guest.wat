;; watguest: a gadgetd guest written by hand in WebAssembly text, with no SDK
;; and no WASI. It exists to prove that docs/ABI.md is enough to write a guest
;; in any language, and wasmhost/conformance_test.go runs it through the same
;; checks as the Go test counter (build: wat2wasm guest.wat -o guest.wasm).
;;
;; What it implements:
;;   - Guest (export 0): open() returns a new session object (exports 1, 2, ...).
;;   - Counter (internal/testcounter/counterpb/counter.capnp) on every session:
;;     increment(by) and get(), with the value kept in host storage under the
;;     key "value" as 8 big-endian bytes (the same format as the Go counter).
;;     Every call asks Host.storage() (host import 0) for the store, calls
;;     Storage.get / Storage.put on it through exchange+take, and releases it.
;;   - Anything else (Counter.watch included) is answered with an exception
;;     frame of type unimplemented that names the interface and method.
;;     Exceptions from the host are handed back as they came, type included.
;;   - Release frames from the host retire session indices; capabilities the
;;     host passes in params are released at once (this guest keeps none).
;;
;; Outgoing frames are capnp messages assembled by hand as data segments
;; (single segment, annotated word by word) whose few variable fields are
;; patched in place before sending. Incoming frames are parsed in full
;; generality: any number of segments, far and double-far pointers, structs
;; of any size (missing fields read as zero), every access bounds-checked
;; against the message. A malformed frame from the host traps, which makes
;; the host discard this instance.
;;
;; This guest only calls trusted capabilities (Host and what Host returns),
;; so the host never delivers a nested call while it waits in exchange; if it
;; did, the guest traps rather than answer the wrong call.
(module
  (import "gadgetd" "exchange" (func $exchange (param i32 i32) (result i32)))
  (import "gadgetd" "take" (func $take (param i32)))
  (import "gadgetd" "release" (func $release (param i32)))

  ;; Memory map:
  ;;   0x0400  frame templates (data segments below)
  ;;   0x0700  exception texts and hex digits
  ;;   0x0900  exception frame buffer (288 bytes)
  ;;   0x1000  base address of each segment of the frame being read (256 max)
  ;;   0x2000  released-session bitmap (8 KiB: export indices 0..65535)
  ;;   0x10000 heap: frames from the host (gadgetd_alloc, take); reset per call
  (memory (export "memory") 2)

  (global $heap (mut i32) (i32.const 0x10000))
  (global $next_export (mut i32) (i32.const 0)) ;; set by _initialize
  (global $lo (mut i32) (i32.const 0))  ;; first byte of the frame's segments
  (global $hi (mut i32) (i32.const 0))  ;; end of the frame's segments
  (global $nseg (mut i32) (i32.const 0))
  (global $tag (mut i64) (i64.const 0)) ;; pointer word of the last $deref
  ;; the return Payload of the last successful $call
  (global $pa (mut i32) (i32.const 0))
  (global $pdw (mut i32) (i32.const 0))
  (global $ppc (mut i32) (i32.const 0))
  (global $storage (mut i32) (i32.const 0)) ;; host import index of Storage
  (global $value (mut i64) (i64.const 0))   ;; what $load read

  ;; ---- frame templates: 8-byte stream header, then segment 0 ----
  ;; Words are little-endian. "ptr" comments give the pointer's fields.

  ;; 0x400: Frame{call: Call{target 0 (Host), Host.storage() = 0xa029bcbe81514bf0 @0}}
  (data (i32.const 0x400)
    "\00\00\00\00\08\00\00\00"  ;; 1 segment of 8 words
    "\00\00\00\00\01\00\01\00"  ;; w0 root: struct ptr, offset 0, 1 data word, 1 ptr -> Frame at w1
    "\00\00\00\00\00\00\00\00"  ;; w1 Frame data: union tag 0 = call
    "\00\00\00\00\02\00\01\00"  ;; w2 Frame.call: struct ptr, offset 0, 2 data words, 1 ptr -> Call at w3
    "\00\00\00\00\00\00\00\00"  ;; w3 Call: target 0 (bits 0-31), methodId 0 (bits 32-47)
    "\f0\4b\51\81\be\bc\29\a0"  ;; w4 Call.interfaceId = Host
    "\00\00\00\00\00\00\02\00"  ;; w5 Call.params: struct ptr, offset 0, 0 data, 2 ptrs -> Payload at w6
    "\fc\ff\ff\ff\00\00\00\00"  ;; w6 Payload.content: empty struct (offset -1, size 0)
    "\00\00\00\00\00\00\00\00") ;; w7 Payload.capTable: null (no capabilities)

  ;; 0x480: Frame{call: Call{target S (patched at +32), Storage.get(key "value")}}
  (data (i32.const 0x480)
    "\00\00\00\00\0a\00\00\00"  ;; 1 segment of 10 words
    "\00\00\00\00\01\00\01\00"  ;; w0 root -> Frame at w1
    "\00\00\00\00\00\00\00\00"  ;; w1 union tag 0 = call
    "\00\00\00\00\02\00\01\00"  ;; w2 -> Call at w3
    "\00\00\00\00\00\00\00\00"  ;; w3 target (patched), methodId 0 = get
    "\d3\5f\88\9d\fa\4e\b3\e2"  ;; w4 interfaceId = Storage 0xe2b34efa9d885fd3
    "\00\00\00\00\00\00\02\00"  ;; w5 -> Payload at w6
    "\04\00\00\00\00\00\01\00"  ;; w6 content: struct ptr, offset 1, 0 data, 1 ptr -> get params at w8
    "\00\00\00\00\00\00\00\00"  ;; w7 capTable: null
    "\01\00\00\00\32\00\00\00"  ;; w8 key: list ptr, offset 0, bytes, 6 elements -> w9
    "value\00\00\00")           ;; w9 "value" NUL, padding

  ;; 0x500: Frame{call: Call{target S (+32), Storage.put(key "value", value: 8 bytes at +96)}}
  (data (i32.const 0x500)
    "\00\00\00\00\0c\00\00\00"  ;; 1 segment of 12 words
    "\00\00\00\00\01\00\01\00"  ;; w0 root -> Frame at w1
    "\00\00\00\00\00\00\00\00"  ;; w1 union tag 0 = call
    "\00\00\00\00\02\00\01\00"  ;; w2 -> Call at w3
    "\00\00\00\00\01\00\00\00"  ;; w3 target (patched), methodId 1 = put
    "\d3\5f\88\9d\fa\4e\b3\e2"  ;; w4 interfaceId = Storage
    "\00\00\00\00\00\00\02\00"  ;; w5 -> Payload at w6
    "\04\00\00\00\00\00\02\00"  ;; w6 content: struct ptr, offset 1, 0 data, 2 ptrs -> put params at w8
    "\00\00\00\00\00\00\00\00"  ;; w7 capTable: null
    "\05\00\00\00\32\00\00\00"  ;; w8 key: list ptr, offset 1, bytes, 6 elements -> w10
    "\05\00\00\00\42\00\00\00"  ;; w9 value: list ptr, offset 1, bytes, 8 elements -> w11
    "value\00\00\00"            ;; w10 "value" NUL, padding
    "\00\00\00\00\00\00\00\00") ;; w11 the counter, big-endian (patched)

  ;; 0x580: Frame{return: Payload{content: (session: cap 0), capTable: [guest N (patched at +68)]}}
  (data (i32.const 0x580)
    "\00\00\00\00\08\00\00\00"  ;; 1 segment of 8 words
    "\00\00\00\00\01\00\01\00"  ;; w0 root -> Frame at w1
    "\01\00\00\00\00\00\00\00"  ;; w1 union tag 1 = return
    "\00\00\00\00\00\00\02\00"  ;; w2 Frame.return -> Payload at w3
    "\04\00\00\00\00\00\01\00"  ;; w3 content: struct ptr, offset 1, 0 data, 1 ptr -> results at w5
    "\05\00\00\00\0f\00\00\00"  ;; w4 capTable: list ptr, offset 1, composite, 1 word -> tag at w6
    "\03\00\00\00\00\00\00\00"  ;; w5 results.session: capability pointer, cap table index 0
    "\04\00\00\00\01\00\00\00"  ;; w6 list tag: 1 element of 1 data word, 0 ptrs
    "\01\00\00\00\00\00\00\00") ;; w7 CapDescriptor: union tag 1 = guest, index (patched, bits 32-63)

  ;; 0x600: Frame{return: Payload{content: (value: Int64 at +48)}}
  (data (i32.const 0x600)
    "\00\00\00\00\06\00\00\00"  ;; 1 segment of 6 words
    "\00\00\00\00\01\00\01\00"  ;; w0 root -> Frame at w1
    "\01\00\00\00\00\00\00\00"  ;; w1 union tag 1 = return
    "\00\00\00\00\00\00\02\00"  ;; w2 -> Payload at w3
    "\04\00\00\00\01\00\00\00"  ;; w3 content: struct ptr, offset 1, 1 data word, 0 ptrs -> w5
    "\00\00\00\00\00\00\00\00"  ;; w4 capTable: null
    "\00\00\00\00\00\00\00\00") ;; w5 value (patched)

  (data (i32.const 0x700) "0123456789abcdef")
  ;; 0x710, 75 bytes; hex digits patched at 0x726 (16) and 0x747 (4)
  (data (i32.const 0x710) "watguest: interface 0x0000000000000000 has no method 0x0000 (unimplemented)")
  (data (i32.const 0x760) "watguest: no such object (never exported, or released)") ;; 54
  (data (i32.const 0x7a0) "watguest: stored counter value is corrupt") ;; 41
  (data (i32.const 0x7d0) "watguest: Host.storage returned no host capability") ;; 50
  (data (i32.const 0x810) "watguest: gadgetd_deliver expects a call or release frame") ;; 57
  (data (i32.const 0x850) "watguest: too many sessions") ;; 27

  ;; ---- memory and frames ----

  ;; $bump allocates n bytes on the heap, growing memory as needed.
  (func $bump (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $pages i32)
    (if (i32.gt_u (local.get $n) (i32.const 0x10000000)) (then unreachable))
    (local.set $p (global.get $heap))
    (local.set $end (i32.and (i32.add (i32.add (local.get $p) (local.get $n)) (i32.const 7)) (i32.const -8)))
    (local.set $pages (i32.shr_u (i32.add (local.get $end) (i32.const 0xffff)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $p))

  ;; $pack makes the (ptr << 32 | len) answer of gadgetd_deliver.
  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))

  ;; $exception builds Frame{exception: (reason: text)} in the exception
  ;; buffer: its type is 0, failed.
  (func $exception (param $text i32) (param $n i32) (result i64)
    (call $typed_exception (local.get $text) (local.get $n) (i32.const 0)))

  ;; $typed_exception builds Frame{exception: (reason: text, type)}.
  (func $typed_exception (param $text i32) (param $n i32) (param $type i32) (result i64)
    (local $words i32)
    ;; 3 words (root, Frame data, Frame pointer) + the text and its NUL, padded
    (local.set $words (i32.add (i32.const 3) (i32.shr_u (i32.add (local.get $n) (i32.const 8)) (i32.const 3))))
    (memory.fill (i32.const 0x900) (i32.const 0) (i32.const 288))
    (i32.store offset=4 (i32.const 0x900) (local.get $words))
    (i64.store offset=8 (i32.const 0x900) (i64.const 0x0001000100000000)) ;; root -> Frame
    (i32.store16 offset=16 (i32.const 0x900) (i32.const 2))                 ;; union tag 2 = exception
    (i32.store16 offset=20 (i32.const 0x900) (local.get $type))            ;; exception.type, bits 32-47
    ;; Frame.exception.reason: list ptr, offset 0, bytes, n+1 elements
    (i32.store offset=24 (i32.const 0x900) (i32.const 1))
    (i32.store offset=28 (i32.const 0x900)
      (i32.or (i32.shl (i32.add (local.get $n) (i32.const 1)) (i32.const 3)) (i32.const 2)))
    (memory.copy (i32.const 0x920) (local.get $text) (local.get $n))
    (call $pack (i32.const 0x900) (i32.shl (i32.add (local.get $words) (i32.const 1)) (i32.const 3))))

  ;; $hex writes the low `digits` hex digits of v at dst.
  (func $hex (param $dst i32) (param $v i64) (param $digits i32)
    (loop $next
      (local.set $digits (i32.sub (local.get $digits) (i32.const 1)))
      (i32.store8 (i32.add (local.get $dst) (local.get $digits))
        (i32.load8_u offset=0x700 (i32.wrap_i64 (i64.and (local.get $v) (i64.const 15)))))
      (local.set $v (i64.shr_u (local.get $v) (i64.const 4)))
      (br_if $next (local.get $digits))))

  (func $unimplemented (param $iface i64) (param $method i32) (result i64)
    (call $hex (i32.const 0x726) (local.get $iface) (i32.const 16))
    (call $hex (i32.const 0x747) (i64.extend_i32_u (local.get $method)) (i32.const 4))
    (call $typed_exception (i32.const 0x710) (i32.const 75) (i32.const 3))) ;; 3 = unimplemented

  ;; ---- reading capnp messages ----

  ;; $check traps unless [p, p+n) lies inside the frame being read.
  (func $check (param $p i32) (param $n i32)
    (if (i32.or (i32.lt_u (local.get $p) (global.get $lo))
          (i32.or (i32.gt_u (local.get $n) (i32.sub (global.get $hi) (global.get $lo)))
                  (i32.gt_u (local.get $p) (i32.sub (global.get $hi) (local.get $n)))))
      (then unreachable)))

  ;; $open_msg reads the stream framing of the message at p (n bytes): a u32
  ;; segment count minus one, a u32 size in words per segment, padding to 8
  ;; bytes, then the segments. Segment 0 starts with the root pointer.
  (func $open_msg (param $p i32) (param $n i32)
    (local $count i32) (local $i i32) (local $base i32) (local $size i32) (local $end i32)
    (if (i32.lt_u (local.get $n) (i32.const 8)) (then unreachable))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $count (i32.add (i32.load (local.get $p)) (i32.const 1)))
    (if (i32.or (i32.eqz (local.get $count)) (i32.gt_u (local.get $count) (i32.const 256)))
      (then unreachable))
    (local.set $base (i32.add (local.get $p)
      (i32.and (i32.add (i32.shl (local.get $count) (i32.const 2)) (i32.const 11)) (i32.const -8))))
    (if (i32.gt_u (local.get $base) (local.get $end)) (then unreachable))
    (global.set $lo (local.get $base))
    (loop $seg
      (local.set $size (i32.load offset=4 (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))))
      (if (i32.gt_u (local.get $size) (i32.shr_u (i32.sub (local.get $end) (local.get $base)) (i32.const 3)))
        (then unreachable))
      (i32.store offset=0x1000 (i32.shl (local.get $i) (i32.const 2)) (local.get $base))
      (local.set $base (i32.add (local.get $base) (i32.shl (local.get $size) (i32.const 3))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $seg (i32.lt_u (local.get $i) (local.get $count))))
    (if (i32.lt_u (i32.sub (local.get $base) (global.get $lo)) (i32.const 8)) (then unreachable))
    (global.set $hi (local.get $base))
    (global.set $nseg (local.get $count)))

  ;; $far_target is where a far pointer w points: segment w>>32, word (w>>3).
  (func $far_target (param $w i64) (result i32)
    (local $seg i32)
    (local.set $seg (i32.wrap_i64 (i64.shr_u (local.get $w) (i64.const 32))))
    (if (i32.ge_u (local.get $seg) (global.get $nseg)) (then unreachable))
    (i32.add (i32.load offset=0x1000 (i32.shl (local.get $seg) (i32.const 2)))
             (i32.and (i32.wrap_i64 (local.get $w)) (i32.const -8))))

  ;; $deref follows the pointer at loc (0: a null pointer). It returns the
  ;; address of the object (0 for null and capability pointers) and leaves the
  ;; word describing it (kind, sizes; 0 for null) in $tag.
  (func $deref (param $loc i32) (result i32)
    (local $w i64) (local $low i32) (local $pad i32)
    (global.set $tag (i64.const 0))
    (if (i32.eqz (local.get $loc)) (then (return (i32.const 0))))
    (call $check (local.get $loc) (i32.const 8))
    (local.set $w (i64.load (local.get $loc)))
    (local.set $low (i32.wrap_i64 (local.get $w)))
    (if (i32.eq (i32.and (local.get $low) (i32.const 3)) (i32.const 2))
      (then
        (local.set $pad (call $far_target (local.get $w)))
        (if (i32.and (local.get $low) (i32.const 4))
          (then
            ;; double-far: the pad is a far pointer to the object, then its tag
            (call $check (local.get $pad) (i32.const 16))
            (local.set $w (i64.load (local.get $pad)))
            (if (i32.ne (i32.and (i32.wrap_i64 (local.get $w)) (i32.const 7)) (i32.const 2))
              (then unreachable))
            (global.set $tag (i64.load offset=8 (local.get $pad)))
            (return (call $far_target (local.get $w)))))
        ;; single-far: the pad is an ordinary pointer in the target segment
        (local.set $loc (local.get $pad))
        (call $check (local.get $loc) (i32.const 8))
        (local.set $w (i64.load (local.get $loc)))
        (local.set $low (i32.wrap_i64 (local.get $w)))
        (if (i32.eq (i32.and (local.get $low) (i32.const 3)) (i32.const 2)) (then unreachable))))
    (global.set $tag (local.get $w))
    (if (i64.eqz (local.get $w)) (then (return (i32.const 0))))
    (if (i32.eq (i32.and (local.get $low) (i32.const 3)) (i32.const 3)) (then (return (i32.const 0))))
    ;; struct or list: signed word offset in bits 2-31, from the end of the pointer
    (i32.add (i32.add (local.get $loc) (i32.const 8))
             (i32.shl (i32.shr_s (local.get $low) (i32.const 2)) (i32.const 3))))

  ;; $struct reads the struct pointer at loc: (address, data bytes, pointer
  ;; count). A null pointer is an empty struct: every field reads as zero.
  (func $struct (param $loc i32) (result i32 i32 i32)
    (local $a i32) (local $dw i32) (local $pc i32)
    (local.set $a (call $deref (local.get $loc)))
    (if (i64.eqz (global.get $tag))
      (then (return (i32.const 0) (i32.const 0) (i32.const 0))))
    (if (i32.wrap_i64 (i64.and (global.get $tag) (i64.const 3))) (then unreachable)) ;; not a struct
    (local.set $dw (i32.shl (i32.wrap_i64 (i64.and (i64.shr_u (global.get $tag) (i64.const 32)) (i64.const 0xffff))) (i32.const 3)))
    (local.set $pc (i32.wrap_i64 (i64.shr_u (global.get $tag) (i64.const 48))))
    (call $check (local.get $a) (i32.add (local.get $dw) (i32.shl (local.get $pc) (i32.const 3))))
    (local.get $a) (local.get $dw) (local.get $pc))

  ;; $word is data word k of a struct, or 0 when the struct is shorter.
  (func $word (param $a i32) (param $dw i32) (param $k i32) (result i64)
    (if (result i64) (i32.lt_u (i32.shl (local.get $k) (i32.const 3)) (local.get $dw))
      (then (i64.load (i32.add (local.get $a) (i32.shl (local.get $k) (i32.const 3)))))
      (else (i64.const 0))))

  ;; $ptr is the location of pointer i of a struct, or 0 (null) past its end.
  (func $ptr (param $a i32) (param $dw i32) (param $pc i32) (param $i i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $i) (local.get $pc))
      (then (i32.add (i32.add (local.get $a) (local.get $dw)) (i32.shl (local.get $i) (i32.const 3))))
      (else (i32.const 0))))

  ;; $bytes reads a Data or Text pointer: (address, length).
  (func $bytes (param $loc i32) (result i32 i32)
    (local $a i32) (local $n i32)
    (local.set $a (call $deref (local.get $loc)))
    (if (i64.eqz (global.get $tag)) (then (return (i32.const 0) (i32.const 0))))
    ;; list pointer (kind 1) of bytes (element size 2)
    (if (i64.ne (i64.and (global.get $tag) (i64.const 0x700000003)) (i64.const 0x200000001))
      (then unreachable))
    (local.set $n (i32.wrap_i64 (i64.shr_u (global.get $tag) (i64.const 35))))
    (call $check (local.get $a) (local.get $n))
    (local.get $a) (local.get $n))

  ;; $elems reads a list of structs: (first element, count, element size in
  ;; bytes, data bytes per element).
  (func $elems (param $loc i32) (result i32 i32 i32 i32)
    (local $a i32) (local $words i32) (local $t i64) (local $n i32) (local $dw i32) (local $size i32)
    (local.set $a (call $deref (local.get $loc)))
    (if (i64.eqz (global.get $tag))
      (then (return (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))))
    ;; list pointer (kind 1) of composite elements (element size 7)
    (if (i64.ne (i64.and (global.get $tag) (i64.const 0x700000003)) (i64.const 0x700000001))
      (then unreachable))
    (local.set $words (i32.wrap_i64 (i64.shr_u (global.get $tag) (i64.const 35))))
    (call $check (local.get $a) (i32.const 8))
    (call $check (i32.add (local.get $a) (i32.const 8)) (i32.shl (local.get $words) (i32.const 3)))
    (local.set $t (i64.load (local.get $a))) ;; the tag: a struct pointer whose offset is the count
    (if (i32.wrap_i64 (i64.and (local.get $t) (i64.const 3))) (then unreachable))
    (local.set $n (i32.shr_u (i32.wrap_i64 (local.get $t)) (i32.const 2)))
    (local.set $dw (i32.shl (i32.wrap_i64 (i64.and (i64.shr_u (local.get $t) (i64.const 32)) (i64.const 0xffff))) (i32.const 3)))
    (local.set $size (i32.add (local.get $dw) (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $t) (i64.const 48))) (i32.const 3))))
    (if (i64.gt_u (i64.mul (i64.extend_i32_u (local.get $n)) (i64.extend_i32_u (local.get $size)))
                  (i64.extend_i32_u (i32.shl (local.get $words) (i32.const 3))))
      (then unreachable))
    (i32.add (local.get $a) (i32.const 8)) (local.get $n) (local.get $size) (local.get $dw))

  ;; $release_caps releases every host capability in a cap table.
  (func $release_caps (param $loc i32)
    (local $e i32) (local $n i32) (local $size i32) (local $dw i32) (local $w i64)
    (call $elems (local.get $loc))
    (local.set $dw) (local.set $size) (local.set $n) (local.set $e)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $w (call $word (local.get $e) (local.get $dw) (i32.const 0)))
        (if (i64.eq (i64.and (local.get $w) (i64.const 0xffff)) (i64.const 2)) ;; host
          (then (call $release (i32.wrap_i64 (i64.shr_u (local.get $w) (i64.const 32))))))
        (local.set $e (i32.add (local.get $e) (local.get $size)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next))))

  ;; ---- calling the host ----

  ;; $call sends the call frame at p (n bytes) through exchange and takes the
  ;; answer. On a return frame it leaves the Payload in $pa/$pdw/$ppc and
  ;; returns 0; on an exception frame it returns that frame, packed, so the
  ;; caller can hand it straight back as its own answer.
  (func $call (param $p i32) (param $n i32) (result i64)
    (local $len i32) (local $buf i32) (local $fa i32) (local $fdw i32) (local $fpc i32) (local $which i32)
    (local.set $len (call $exchange (local.get $p) (local.get $n)))
    (local.set $buf (call $bump (local.get $len)))
    (call $take (local.get $buf))
    (call $open_msg (local.get $buf) (local.get $len))
    (call $struct (global.get $lo))
    (local.set $fpc) (local.set $fdw) (local.set $fa)
    (local.set $which (i32.and (i32.wrap_i64 (call $word (local.get $fa) (local.get $fdw) (i32.const 0))) (i32.const 0xffff)))
    (if (i32.eq (local.get $which) (i32.const 2))
      (then (return (call $pack (local.get $buf) (local.get $len)))))
    ;; 0 would be a call delivered while we wait: see the top of this file
    (if (i32.ne (local.get $which) (i32.const 1)) (then unreachable))
    (call $struct (call $ptr (local.get $fa) (local.get $fdw) (local.get $fpc) (i32.const 0)))
    (global.set $ppc) (global.set $pdw) (global.set $pa)
    (i64.const 0))

  ;; $open_storage calls Host.storage() and sets $storage to the Storage
  ;; capability's host import index.
  (func $open_storage (result i64)
    (local $r i64) (local $ca i32) (local $cdw i32) (local $cpc i32) (local $cap i64)
    (local $e i32) (local $n i32) (local $size i32) (local $dw i32) (local $w i64)
    (local.set $r (call $call (i32.const 0x400) (i32.const 72)))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    ;; results.storage is a capability pointer: an index into the cap table
    (call $struct (call $ptr (global.get $pa) (global.get $pdw) (global.get $ppc) (i32.const 0)))
    (local.set $cpc) (local.set $cdw) (local.set $ca)
    (drop (call $deref (call $ptr (local.get $ca) (local.get $cdw) (local.get $cpc) (i32.const 0))))
    (local.set $cap (global.get $tag))
    (call $elems (call $ptr (global.get $pa) (global.get $pdw) (global.get $ppc) (i32.const 1)))
    (local.set $dw) (local.set $size) (local.set $n) (local.set $e)
    (if (i32.or (i64.ne (i64.and (local.get $cap) (i64.const 0xffffffff)) (i64.const 3))
                (i64.ge_u (i64.shr_u (local.get $cap) (i64.const 32)) (i64.extend_i32_u (local.get $n))))
      (then
        (call $release_caps (call $ptr (global.get $pa) (global.get $pdw) (global.get $ppc) (i32.const 1)))
        (return (call $exception (i32.const 0x7d0) (i32.const 50)))))
    (local.set $w (call $word
      (i32.add (local.get $e) (i32.mul (i32.wrap_i64 (i64.shr_u (local.get $cap) (i64.const 32))) (local.get $size)))
      (local.get $dw) (i32.const 0)))
    (if (i64.ne (i64.and (local.get $w) (i64.const 0xffff)) (i64.const 2)) ;; not a host capability
      (then
        (call $release_caps (call $ptr (global.get $pa) (global.get $pdw) (global.get $ppc) (i32.const 1)))
        (return (call $exception (i32.const 0x7d0) (i32.const 50)))))
    (global.set $storage (i32.wrap_i64 (i64.shr_u (local.get $w) (i64.const 32))))
    (i64.const 0))

  ;; $load sets $value from Storage.get("value"); a missing key reads as 0.
  (func $load (result i64)
    (local $r i64) (local $ca i32) (local $cdw i32) (local $cpc i32) (local $va i32) (local $vn i32) (local $i i32)
    (i32.store offset=32 (i32.const 0x480) (global.get $storage))
    (local.set $r (call $call (i32.const 0x480) (i32.const 88)))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    ;; results: value @0 :Data (pointer 0), found @1 :Bool (data bit 0)
    (call $struct (call $ptr (global.get $pa) (global.get $pdw) (global.get $ppc) (i32.const 0)))
    (local.set $cpc) (local.set $cdw) (local.set $ca)
    (global.set $value (i64.const 0))
    (if (i64.eqz (i64.and (call $word (local.get $ca) (local.get $cdw) (i32.const 0)) (i64.const 1)))
      (then (return (i64.const 0))))
    (call $bytes (call $ptr (local.get $ca) (local.get $cdw) (local.get $cpc) (i32.const 0)))
    (local.set $vn) (local.set $va)
    (if (i32.ne (local.get $vn) (i32.const 8))
      (then (return (call $exception (i32.const 0x7a0) (i32.const 41)))))
    (loop $byte ;; big-endian
      (global.set $value (i64.or (i64.shl (global.get $value) (i64.const 8))
        (i64.load8_u (i32.add (local.get $va) (local.get $i)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $byte (i32.lt_u (local.get $i) (i32.const 8))))
    (i64.const 0))

  ;; $store writes v with Storage.put("value", v as 8 big-endian bytes).
  (func $store (param $v i64) (result i64)
    (local $i i32)
    (i32.store offset=32 (i32.const 0x500) (global.get $storage))
    (local.set $i (i32.const 8))
    (loop $byte
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i64.store8 offset=0x560 (local.get $i) (local.get $v))
      (local.set $v (i64.shr_u (local.get $v) (i64.const 8)))
      (br_if $byte (local.get $i)))
    (call $call (i32.const 0x500) (i32.const 104)))

  ;; $result answers (value :Int64).
  (func $result (param $v i64) (result i64)
    (i64.store offset=48 (i32.const 0x600) (local.get $v))
    (call $pack (i32.const 0x600) (i32.const 56)))

  ;; ---- the objects ----

  (func $open (result i64)
    (local $i i32)
    (local.set $i (global.get $next_export))
    (if (i32.ge_u (local.get $i) (i32.const 65536))
      (then (return (call $exception (i32.const 0x850) (i32.const 27)))))
    (global.set $next_export (i32.add (local.get $i) (i32.const 1)))
    (i32.store offset=68 (i32.const 0x580) (local.get $i))
    (call $pack (i32.const 0x580) (i32.const 72)))

  ;; $live reports whether session index i was exported and not released.
  (func $live (param $i i32) (result i32)
    (if (i32.or (i32.eqz (local.get $i)) (i32.ge_u (local.get $i) (global.get $next_export)))
      (then (return (i32.const 0))))
    (i32.eqz (i32.and (i32.load8_u offset=0x2000 (i32.shr_u (local.get $i) (i32.const 3)))
                      (i32.shl (i32.const 1) (i32.and (local.get $i) (i32.const 7))))))

  (func $increment (param $by i64) (result i64)
    (local $r i64)
    (if (i64.eqz (local.get $by)) (then (local.set $by (i64.const 1))))
    (local.set $r (call $open_storage))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    (local.set $r (call $load))
    (if (i64.eqz (local.get $r))
      (then (local.set $r (call $store (i64.add (global.get $value) (local.get $by))))))
    (call $release (global.get $storage))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    (call $result (i64.add (global.get $value) (local.get $by))))

  (func $get (result i64)
    (local $r i64)
    (local.set $r (call $open_storage))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    (local.set $r (call $load))
    (call $release (global.get $storage))
    (if (i64.ne (local.get $r) (i64.const 0)) (then (return (local.get $r))))
    (call $result (global.get $value)))

  ;; ---- the ABI exports ----

  (func (export "_initialize")
    (global.set $next_export (i32.const 1)))

  (func (export "gadgetd_alloc") (param $n i32) (result i32)
    (global.set $heap (i32.const 0x10000))
    (call $bump (local.get $n)))

  (func (export "gadgetd_deliver") (param $p i32) (param $n i32) (result i64)
    (local $fa i32) (local $fdw i32) (local $fpc i32) (local $w i64)
    (local $ca i32) (local $cdw i32) (local $cpc i32)
    (local $pa i32) (local $pdw i32) (local $ppc i32)
    (local $ka i32) (local $kdw i32) (local $kpc i32)
    (local $target i32) (local $method i32) (local $iface i64)
    (call $open_msg (local.get $p) (local.get $n))
    (call $struct (global.get $lo))
    (local.set $fpc) (local.set $fdw) (local.set $fa)
    (local.set $w (call $word (local.get $fa) (local.get $fdw) (i32.const 0)))
    ;; Frame{release: index}: the host dropped a session
    (if (i64.eq (i64.and (local.get $w) (i64.const 0xffff)) (i64.const 3))
      (then
        (local.set $target (i32.wrap_i64 (i64.shr_u (local.get $w) (i64.const 32))))
        (if (call $live (local.get $target))
          (then
            (i32.store8 offset=0x2000 (i32.shr_u (local.get $target) (i32.const 3))
              (i32.or (i32.load8_u offset=0x2000 (i32.shr_u (local.get $target) (i32.const 3)))
                      (i32.shl (i32.const 1) (i32.and (local.get $target) (i32.const 7)))))))
        (return (i64.const 0))))
    (if (i64.ne (i64.and (local.get $w) (i64.const 0xffff)) (i64.const 0))
      (then (return (call $exception (i32.const 0x810) (i32.const 57)))))
    ;; Frame{call: Call{target, interfaceId, methodId, params: Payload{content, capTable}}}
    (call $struct (call $ptr (local.get $fa) (local.get $fdw) (local.get $fpc) (i32.const 0)))
    (local.set $cpc) (local.set $cdw) (local.set $ca)
    (local.set $w (call $word (local.get $ca) (local.get $cdw) (i32.const 0)))
    (local.set $target (i32.wrap_i64 (local.get $w)))
    (local.set $method (i32.wrap_i64 (i64.and (i64.shr_u (local.get $w) (i64.const 32)) (i64.const 0xffff))))
    (local.set $iface (call $word (local.get $ca) (local.get $cdw) (i32.const 1)))
    (call $struct (call $ptr (local.get $ca) (local.get $cdw) (local.get $cpc) (i32.const 0)))
    (local.set $ppc) (local.set $pdw) (local.set $pa)
    (call $struct (call $ptr (local.get $pa) (local.get $pdw) (local.get $ppc) (i32.const 0)))
    (local.set $kpc) (local.set $kdw) (local.set $ka)
    ;; This guest keeps no capability it is given (Counter.watch's listener
    ;; included): release them now, or the host would hold them for us.
    (call $release_caps (call $ptr (local.get $pa) (local.get $pdw) (local.get $ppc) (i32.const 1)))

    (if (i32.eqz (local.get $target)) ;; the Guest main object
      (then
        (if (i32.and (i64.eq (local.get $iface) (i64.const 0x90c9de78f29a64f4)) (i32.eqz (local.get $method)))
          (then (return (call $open))))
        (return (call $unimplemented (local.get $iface) (local.get $method)))))
    (if (i32.eqz (call $live (local.get $target)))
      (then (return (call $exception (i32.const 0x760) (i32.const 54)))))
    (if (i64.eq (local.get $iface) (i64.const 0x9e2b9404c4991f3c)) ;; Counter
      (then
        (if (i32.eq (local.get $method) (i32.const 0)) ;; increment(by :Int64)
          (then (return (call $increment (call $word (local.get $ka) (local.get $kdw) (i32.const 0))))))
        (if (i32.eq (local.get $method) (i32.const 1)) ;; get()
          (then (return (call $get))))))
    (call $unimplemented (local.get $iface) (local.get $method)))
)
