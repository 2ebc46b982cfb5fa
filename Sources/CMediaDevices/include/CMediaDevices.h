// CMediaDevices: the C headers of the device libraries (V4L2, PulseAudio, ALSA, xcb + MIT-SHM,
// libturbojpeg) plus small C functions for what Swift cannot import: the V4L2 ioctl request codes
// are function-like macros (_IOR/_IOWR) and ioctl(2) is variadic. No device logic lives here.
#ifndef CMEDIADEVICES_H
#define CMEDIADEVICES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <poll.h>
#include <fcntl.h>

#include <pulse/simple.h>
#include <pulse/error.h>

#include <alsa/asoundlib.h>

#include <xcb/xcb.h>
#include <xcb/shm.h>

#include <turbojpeg.h>

// MARK: V4L2 ioctl requests (function-like macros in linux/videodev2.h)

unsigned long wcs_vidioc_querycap(void);
unsigned long wcs_vidioc_enum_fmt(void);
unsigned long wcs_vidioc_enum_framesizes(void);
unsigned long wcs_vidioc_enum_frameintervals(void);
unsigned long wcs_vidioc_s_fmt(void);
unsigned long wcs_vidioc_g_fmt(void);
unsigned long wcs_vidioc_s_parm(void);
unsigned long wcs_vidioc_reqbufs(void);
unsigned long wcs_vidioc_querybuf(void);
unsigned long wcs_vidioc_qbuf(void);
unsigned long wcs_vidioc_dqbuf(void);
unsigned long wcs_vidioc_streamon(void);
unsigned long wcs_vidioc_streamoff(void);

/// `ioctl(fd, request, arg)` retried while it fails with EINTR; returns its result (-1 and errno
/// on failure).
int wcs_ioctl(int fd, unsigned long request, void *arg);

/// `open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)`: -1 and errno on failure.
int wcs_open_video_device(const char *path);

/// `MAP_FAILED` as a pointer Swift can compare with.
void *wcs_map_failed(void);

// MARK: ALSA

/// Installs a libasound error handler that prints nothing (`snd_lib_error_set_handler`; the
/// handler is variadic, which Swift cannot define). Failures still reach callers as return codes.
void wcs_alsa_silence_errors(void);

// MARK: xcb

/// Whether the X server offers MIT-SHM (`xcb_get_extension_data(c, &xcb_shm_id)->present`); the
/// extension id is a C global Swift 6 cannot touch.
int wcs_xcb_shm_present(xcb_connection_t *connection);

#endif
