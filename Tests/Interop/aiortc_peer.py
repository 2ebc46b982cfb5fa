#!/usr/bin/env python3
"""aiortc peer for the WCSMedia PeerConnection interop test (PeerConnectionInteropTests).

Speaks JSON lines: stdin carries commands from the Swift test, stdout carries replies and
events (logs go to stderr). Everything runs on 127.0.0.1 only, without STUN/TURN servers.

  answerer mode (default):
  <- {"offer": sdp}                 the Swift PeerConnection's offer (audio, sendrecv)
  -> {"answer": sdp}                aiortc's answer, candidates inline
  offerer mode (`aiortc_peer.py offerer`):
  -> {"offer": sdp}                 aiortc's offer (audio, sendrecv), candidates inline
  <- {"answer": sdp}                the Swift PeerConnection's answer
  -> {"event": "state", "state": s} every connectionState change of aiortc
  <- {"cmd": "report"}
  -> {"event": "report", "sent": [hex...], "received": [hex...], "state": s}
       plain RTP packets (before SRTP protect / after unprotect) aiortc sent and received
  <- {"cmd": "close"}               close and exit

aiortc's RTCDtlsTransport is wrapped so the test compares whole RTP packets byte for byte.
"""
import asyncio
import json
import sys

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack
from aiortc.rtcdtlstransport import RTCDtlsTransport
from aiortc.rtp import is_rtcp

# aioice skips loopback addresses; the test runs on 127.0.0.1 only.
aioice.ice.get_host_addresses = lambda *a, **k: ["127.0.0.1"]

SENT = []
RECEIVED = []
LIMIT = 500

_send_rtp = RTCDtlsTransport._send_rtp
_handle_rtp_data = RTCDtlsTransport._handle_rtp_data


async def send_rtp(self, data):
    if not is_rtcp(data) and len(SENT) < LIMIT:
        SENT.append(bytes(data).hex())
    await _send_rtp(self, data)


async def handle_rtp_data(self, data, arrival_time_ms):
    if len(RECEIVED) < LIMIT:
        RECEIVED.append(bytes(data).hex())
    await _handle_rtp_data(self, data, arrival_time_ms)


RTCDtlsTransport._send_rtp = send_rtp
RTCDtlsTransport._handle_rtp_data = handle_rtp_data


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def read_command(timeout=20):
    loop = asyncio.get_running_loop()
    line = await asyncio.wait_for(loop.run_in_executor(None, sys.stdin.readline), timeout)
    if not line:
        raise SystemExit("stdin closed")
    return json.loads(line)


async def main():
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))

    @pc.on("connectionstatechange")
    async def on_state():
        emit({"event": "state", "state": pc.connectionState})

    if len(sys.argv) > 1 and sys.argv[1] == "offerer":
        # Silence, Opus-encoded by aiortc.
        pc.addTrack(AudioStreamTrack())
        await pc.setLocalDescription(await pc.createOffer())
        emit({"offer": pc.localDescription.sdp})
        answer = await read_command()
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["answer"], type="answer"))
    else:
        offer = await read_command()
        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["offer"], type="offer"))
        # Send silence (Opus-encoded by aiortc) back on the offered audio section.
        for transceiver in pc.getTransceivers():
            if transceiver.kind == "audio":
                transceiver.direction = "sendrecv"
                transceiver.sender.replaceTrack(AudioStreamTrack())
        answer = await pc.createAnswer()
        await pc.setLocalDescription(answer)
        emit({"answer": pc.localDescription.sdp})

    while True:
        command = await read_command()
        if command.get("cmd") == "report":
            emit({"event": "report", "sent": SENT, "received": RECEIVED,
                  "state": pc.connectionState})
        elif command.get("cmd") == "close":
            break
    await pc.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (SystemExit, asyncio.TimeoutError) as exc:
        print(f"aiortc_peer: {exc!r}", file=sys.stderr)
