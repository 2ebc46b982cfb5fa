#include "CMediaDevices.h"

#include <errno.h>

unsigned long wcs_vidioc_querycap(void) { return VIDIOC_QUERYCAP; }
unsigned long wcs_vidioc_enum_fmt(void) { return VIDIOC_ENUM_FMT; }
unsigned long wcs_vidioc_enum_framesizes(void) { return VIDIOC_ENUM_FRAMESIZES; }
unsigned long wcs_vidioc_enum_frameintervals(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
unsigned long wcs_vidioc_s_fmt(void) { return VIDIOC_S_FMT; }
unsigned long wcs_vidioc_g_fmt(void) { return VIDIOC_G_FMT; }
unsigned long wcs_vidioc_s_parm(void) { return VIDIOC_S_PARM; }
unsigned long wcs_vidioc_reqbufs(void) { return VIDIOC_REQBUFS; }
unsigned long wcs_vidioc_querybuf(void) { return VIDIOC_QUERYBUF; }
unsigned long wcs_vidioc_qbuf(void) { return VIDIOC_QBUF; }
unsigned long wcs_vidioc_dqbuf(void) { return VIDIOC_DQBUF; }
unsigned long wcs_vidioc_streamon(void) { return VIDIOC_STREAMON; }
unsigned long wcs_vidioc_streamoff(void) { return VIDIOC_STREAMOFF; }

int wcs_ioctl(int fd, unsigned long request, void *arg) {
  int r;
  do {
    r = ioctl(fd, request, arg);
  } while (r == -1 && errno == EINTR);
  return r;
}

int wcs_open_video_device(const char *path) { return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); }

void *wcs_map_failed(void) { return MAP_FAILED; }

int wcs_xcb_shm_present(xcb_connection_t *connection) {
  const xcb_query_extension_reply_t *reply = xcb_get_extension_data(connection, &xcb_shm_id);
  return reply != NULL && reply->present;
}

static void wcs_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                  const char *fmt, ...) {
  (void)file;
  (void)line;
  (void)function;
  (void)err;
  (void)fmt;
}

void wcs_alsa_silence_errors(void) { snd_lib_error_set_handler(wcs_alsa_ignore_error); }
