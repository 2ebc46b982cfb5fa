#include "CSockets.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int wcs_enable_receive_timestamps(int fd) {
  int on = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

long wcs_recv_datagram(int fd, void *buffer, size_t capacity, void *address, uint32_t *length,
                       int64_t *seconds, int64_t *nanoseconds) {
  struct iovec part = {.iov_base = buffer, .iov_len = capacity};
  union {
    char bytes[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } control;
  struct msghdr message = {0};
  message.msg_name = address;
  message.msg_namelen = *length;
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control.bytes;
  message.msg_controllen = sizeof control.bytes;
  *seconds = 0;
  *nanoseconds = 0;
  ssize_t received = recvmsg(fd, &message, MSG_TRUNC);
  if (received < 0) return (long)received;
  *length = message.msg_namelen;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPNS &&
        header->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
      struct timespec stamp;
      memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
      *seconds = (int64_t)stamp.tv_sec;
      *nanoseconds = (int64_t)stamp.tv_nsec;
    }
  }
  return (long)received;
}

int wcs_open_route_watch(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return -1;
  struct sockaddr_nl address;
  memset(&address, 0, sizeof address);
  address.nl_family = AF_NETLINK;
  address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}
