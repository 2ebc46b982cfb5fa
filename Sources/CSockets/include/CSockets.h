// CSockets: UDP receive with the kernel's arrival time (CMSG_* are macros).
// Plain integer and void pointer types only: including <sys/socket.h> here would make this
// module own the socket declarations, hiding them from Swift files that import only Glibc.
#ifndef CSOCKETS_H
#define CSOCKETS_H

#include <stddef.h>
#include <stdint.h>

/// Turns on `SO_TIMESTAMPNS` for `fd`: each datagram carries the kernel's receive time.
/// Returns setsockopt's result (0, or -1 with errno).
int wcs_enable_receive_timestamps(int fd);
/// `recvmsg` of one datagram into `buffer`, the sender's address into `address` (a
/// `sockaddr_storage`; `*length` in: its capacity, out: the address length) and the kernel's
/// receive time (`CLOCK_REALTIME`, `SCM_TIMESTAMPNS`) into `*seconds` and `*nanoseconds`, both
/// left 0 when the datagram has none. Returns recvmsg's result with `MSG_TRUNC`: the datagram's
/// full length, more than `capacity` when only its first `capacity` bytes were stored (-1 with
/// errno).
long wcs_recv_datagram(int fd, void *buffer, size_t capacity, void *address, uint32_t *length,
                       int64_t *seconds, int64_t *nanoseconds);
/// A non-blocking `NETLINK_ROUTE` socket bound to the link and IPv4/IPv6 address groups
/// (`RTMGRP_LINK`, `RTMGRP_IPV4_IFADDR`, `RTMGRP_IPV6_IFADDR`, rtnetlink(7)): the kernel sends
/// it `RTM_NEWADDR`/`RTM_DELADDR`/`RTM_NEWLINK`/`RTM_DELLINK` as they happen. Returns the
/// descriptor, or -1 with errno.
int wcs_open_route_watch(void);

#endif
