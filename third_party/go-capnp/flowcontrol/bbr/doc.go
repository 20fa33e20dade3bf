// package bbr implements the BBR congestion control algorithm, as
// described in:
//
// https://queue.acm.org/detail.cfm?id=3022184
package bbr
