# GStreamer's RTSP server (Debian: gir1.2-gst-rtsp-server-1.0, python3-gst-1.0, x264enc from
# gstreamer1.0-plugins-ugly) on 127.0.0.1, serving raw I420 frames from a file as constrained
# baseline H.264 at /test; or, given one MP4 file, its H.264 and AAC as they are (qtdemux and
# rtpmp4gpay from gstreamer1.0-plugins-good: RFC 6184 and RFC 3640 payloads), in real time,
# each client from the file's start. Prints the bound port, then serves until killed.
# Usage: rtsp_server.py FRAMES.yuv WIDTH HEIGHT FPS | rtsp_server.py FILE.mp4
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

Gst.init(None)
path = sys.argv[1]
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service("0")
factory = GstRtspServer.RTSPMediaFactory()
if len(sys.argv) == 2:
    factory.set_launch(
        f"( filesrc location={path} ! qtdemux name=demux "
        "demux.video_0 ! queue ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 "
        "demux.audio_0 ! queue ! aacparse ! rtpmp4gpay name=pay1 pt=97 )"
    )
else:
    width, height, fps = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    factory.set_launch(
        f"( filesrc location={path} ! rawvideoparse width={width} height={height} format=i420 "
        f"framerate={fps}/1 ! x264enc tune=zerolatency speed-preset=ultrafast "
        f"key-int-max={fps} bitrate=2000 ! video/x-h264,profile=constrained-baseline ! "
        "rtph264pay name=pay0 pt=96 config-interval=-1 )"
    )
server.get_mount_points().add_factory("/test", factory)
server.attach(None)
print(server.get_bound_port(), flush=True)
GLib.MainLoop().run()
