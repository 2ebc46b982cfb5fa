#!/usr/bin/env python3
"""aiortc peer with real media for the WCSMedia media interop tests (AiortcMediaInteropTests).

JSON lines: stdin carries commands from the Swift test, stdout replies and events (logs go to
stderr). 127.0.0.1 only, no STUN/TURN servers. aiortc always answers (our offer, as WCS does).

  `aiortc_media_peer.py receive` — our publish offer (send-only VP8 + Opus):
  <- {"offer": sdp}
  -> {"answer": sdp}                 receive-only answer, candidates inline
  aiortc decodes what arrives with track.recv() and counts:
  <- {"cmd": "report"}
  -> {"event": "report", "state", "video_frames", "widths", "heights", "frame_numbers",
      "audio_frames", "audio_frequency", "keyframes", "decoded_since_keyframe", "plis_sent"}
       frame_numbers: the VirtualCamera number read from the top block band of each decoded
       picture (null when unreadable), at most the last 300; audio_frequency: zero-crossing
       frequency (Hz) of the decoded audio after the first 0.5 s; keyframes: VP8 key frames seen
       in arriving RTP (RFC 7741 §4.3, P bit of the first partition's header).
       Also "numbers_seen" (every distinct readable frame number, at most 20000),
       "longest_gap" (s, the longest time between two new pictures: a higher frame number),
       "last_frame_age" and "first_frame_age" (s before this report; null before a picture).
  <- {"cmd": "pli"}                  aiortc's video receiver sends a PLI (RFC 4585 §6.3.1)
  -> {"event": "pli", "ssrc": n}

  `aiortc_media_peer.py send [WIDTH HEIGHT]` — our play offer (receive-only VP8 + Opus):
  <- {"offer": sdp}
  -> {"answer": sdp}                 send-only answer: a test pattern (320x240 or WIDTH x HEIGHT, 30 fps, the
       VirtualCamera frame-number band on top) and a 1 kHz tone (48 kHz mono, amplitude 8000)
  <- {"cmd": "report"}
  -> {"event": "report", "state", "video_sent", "audio_sent"}

  both: -> {"event": "state", "state": s} on every connectionState change;
        <- {"cmd": "close"} closes and exits.
"""
import asyncio
import fractions
import json
import math
import sys
import time

import aioice.ice
import numpy
from av import AudioFrame, VideoFrame
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamTrack, VideoStreamTrack
from aiortc.rtcrtpreceiver import RTCRtpReceiver

# aioice skips loopback addresses; the tests run on 127.0.0.1 only.
aioice.ice.get_host_addresses = lambda *a, **k: ["127.0.0.1"]

STATS = {
    "video_frames": 0,
    "widths": [],
    "heights": [],
    "frame_numbers": [],
    "audio_frames": 0,
    "audio_frequency": 0.0,
    "keyframes": 0,
    "decoded_since_keyframe": 0,
    "plis_sent": 0,
    "video_sent": 0,
    "audio_sent": 0,
    "numbers_seen": [],
    "longest_gap": 0.0,
}
# monotonic times of the first and the latest new picture, and the highest frame number shown
PICTURES = {"first": None, "last": None, "number": -1}
AUDIO_SAMPLES = []
VIDEO_SSRCS = []


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def block_size(width):
    return max(2, min(16, width // 32))


def read_frame_number(luma):
    """VirtualCamera.decodeFrameNumber: mean of each block's inner half, thresholded at 128."""
    height, width = luma.shape
    size = block_size(width)
    if width < 32 * size or height < size:
        return None
    inset = size // 4
    number = 0
    for bit in range(32):
        block = luma[inset:size - inset, bit * size + inset:(bit + 1) * size - inset]
        mean = int(block.mean())
        if abs(mean - 128) <= 40:
            return None
        number = number << 1 | (1 if mean > 128 else 0)
    return number


def stamp_frame_number(luma, number):
    """VirtualCamera's band: grey rows, then 32 blocks, MSB first, 16 = 0 and 235 = 1."""
    width = luma.shape[1]
    size = block_size(width)
    luma[: size + size // 2, :] = 128
    for bit in range(32):
        one = (number >> (31 - bit)) & 1
        luma[:size, bit * size:(bit + 1) * size] = 235 if one else 16


def is_vp8_key_frame(payload):
    """RFC 7741 §4.2/§4.3: descriptor, then P bit 0 in the first partition's first byte."""
    if len(payload) < 1:
        return False
    first = payload[0]
    extended, start, partition = first & 0x80, first & 0x10, first & 0x07
    index = 1
    if extended:
        if len(payload) < 2:
            return False
        flags = payload[1]
        index = 2
        if flags & 0x80:  # I: picture ID, 7 or 15 bits
            if len(payload) <= index:
                return False
            index += 2 if payload[index] & 0x80 else 1
        if flags & 0x40:  # L: TL0PICIDX
            index += 1
        if flags & 0x30:  # T or K
            index += 1
    if not start or partition != 0 or len(payload) <= index:
        return False
    return payload[index] & 0x01 == 0


_handle_rtp_packet = RTCRtpReceiver._handle_rtp_packet
_send_rtcp_pli = RTCRtpReceiver._send_rtcp_pli


async def handle_rtp_packet(self, packet, arrival_time_ms):
    codecs = getattr(self, "_RTCRtpReceiver__codecs", {})
    codec = codecs.get(packet.payload_type)
    if codec is not None and codec.mimeType.lower() == "video/vp8":
        if packet.ssrc not in VIDEO_SSRCS:
            VIDEO_SSRCS.append(packet.ssrc)
        if is_vp8_key_frame(packet.payload):
            STATS["keyframes"] += 1
            STATS["decoded_since_keyframe"] = 0
    await _handle_rtp_packet(self, packet, arrival_time_ms)


async def send_rtcp_pli(self, media_ssrc):
    STATS["plis_sent"] += 1
    await _send_rtcp_pli(self, media_ssrc)


RTCRtpReceiver._handle_rtp_packet = handle_rtp_packet
RTCRtpReceiver._send_rtcp_pli = send_rtcp_pli


async def consume_video(track):
    while True:
        try:
            frame = await track.recv()
        except Exception:
            return
        STATS["video_frames"] += 1
        STATS["decoded_since_keyframe"] += 1
        if frame.width not in STATS["widths"]:
            STATS["widths"].append(frame.width)
        if frame.height not in STATS["heights"]:
            STATS["heights"].append(frame.height)
        luma = frame.to_ndarray(format="yuv420p")[: frame.height, :]
        numbers = STATS["frame_numbers"]
        number = read_frame_number(luma)
        numbers.append(number)
        del numbers[:-300]
        if number is not None and number not in STATS["numbers_seen"]:
            if len(STATS["numbers_seen"]) < 20000:
                STATS["numbers_seen"].append(number)
        if number is not None and number > PICTURES["number"]:
            now = time.monotonic()
            PICTURES["number"] = number
            if PICTURES["last"] is not None:
                STATS["longest_gap"] = max(STATS["longest_gap"], now - PICTURES["last"])
            PICTURES["first"] = PICTURES["first"] or now
            PICTURES["last"] = now


def zero_crossing_frequency(samples, rate=48000):
    if len(samples) < 2:
        return 0.0
    signs = numpy.signbit(numpy.asarray(samples, dtype=numpy.int32))
    crossings = int(numpy.count_nonzero(signs[1:] != signs[:-1]))
    return crossings / 2 / (len(samples) / rate)


async def consume_audio(track):
    while True:
        try:
            frame = await track.recv()
        except Exception:
            return
        STATS["audio_frames"] += 1
        samples = frame.to_ndarray().reshape(-1)
        channels = len(frame.layout.channels)
        if STATS["audio_frames"] > 25:  # after 0.5 s: past the decoder's start
            AUDIO_SAMPLES.extend(samples[::channels].tolist())
            del AUDIO_SAMPLES[:-48000]
            STATS["audio_frequency"] = zero_crossing_frequency(AUDIO_SAMPLES)


class PatternTrack(VideoStreamTrack):
    """A moving diagonal gradient with the VirtualCamera frame-number band on top."""

    def __init__(self, width=320, height=240):
        super().__init__()
        self.width, self.height, self.count = width, height, 0
        rows = numpy.arange(height)[:, None]
        columns = numpy.arange(width)[None, :]
        self.base = rows + columns

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        n = self.count
        self.count += 1
        yuv = numpy.full((self.height * 3 // 2, self.width), 128, dtype=numpy.uint8)
        yuv[: self.height, :] = (40 + (self.base + 4 * n) % 170).astype(numpy.uint8)
        stamp_frame_number(yuv[: self.height, :], n)
        frame = VideoFrame.from_ndarray(yuv, format="yuv420p")
        frame.pts, frame.time_base = pts, time_base
        STATS["video_sent"] += 1
        return frame


class ToneTrack(MediaStreamTrack):
    """1 kHz sine, 48 kHz mono s16, 20 ms frames paced in real time."""

    kind = "audio"

    def __init__(self, frequency=1000.0):
        super().__init__()
        self.frequency = frequency
        self.timestamp = None
        self.start = None

    async def recv(self):
        rate, count = 48000, 960
        if self.timestamp is None:
            self.start, self.timestamp = time.time(), 0
        else:
            self.timestamp += count
            wait = self.start + self.timestamp / rate - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        t = (self.timestamp + numpy.arange(count)) / rate
        samples = (8000 * numpy.sin(2 * math.pi * self.frequency * t)).astype(numpy.int16)
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        frame.pts = self.timestamp
        frame.time_base = fractions.Fraction(1, rate)
        STATS["audio_sent"] += 1
        return frame


async def read_command(timeout=30):
    loop = asyncio.get_running_loop()
    line = await asyncio.wait_for(loop.run_in_executor(None, sys.stdin.readline), timeout)
    if not line:
        raise SystemExit("stdin closed")
    return json.loads(line)


async def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "receive"
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    tasks = []

    @pc.on("connectionstatechange")
    async def on_state():
        emit({"event": "state", "state": pc.connectionState})

    @pc.on("track")
    def on_track(track):
        consume = consume_video if track.kind == "video" else consume_audio
        tasks.append(asyncio.ensure_future(consume(track)))

    offer = await read_command()
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["offer"], type="offer"))
    if mode == "send":
        for transceiver in pc.getTransceivers():
            size = [int(value) for value in sys.argv[2:4]] or [320, 240]
            track = PatternTrack(*size) if transceiver.kind == "video" else ToneTrack()
            transceiver.sender.replaceTrack(track)
            transceiver.direction = "sendonly"
    await pc.setLocalDescription(await pc.createAnswer())
    emit({"answer": pc.localDescription.sdp})

    while True:
        command = await read_command()
        if command.get("cmd") == "report":
            now = time.monotonic()
            ages = {
                "first_frame_age": None if PICTURES["first"] is None else now - PICTURES["first"],
                "last_frame_age": None if PICTURES["last"] is None else now - PICTURES["last"],
            }
            emit(dict(STATS, **ages, event="report", state=pc.connectionState))
        elif command.get("cmd") == "pli":
            ssrc = VIDEO_SSRCS[0] if VIDEO_SSRCS else None
            if ssrc is not None:
                for transceiver in pc.getTransceivers():
                    if transceiver.kind == "video":
                        await transceiver.receiver._send_rtcp_pli(ssrc)
            emit({"event": "pli", "ssrc": ssrc})
        elif command.get("cmd") == "close":
            break
    for task in tasks:
        task.cancel()
    await pc.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (SystemExit, asyncio.TimeoutError) as exc:
        print(f"aiortc_media_peer: {exc!r}", file=sys.stderr)
