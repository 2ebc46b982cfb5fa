// Interop page driven by the InteropPeer executable (Sources/InteropPeer): it opens the
// WebSocket given by `?ws=PORT`, runs the scenario given by `?scenario=NAME`, and sends one
// `{type: "result", ...}` message. Every scenario is bounded by its own deadline, so the peer
// always gets a result (with `ok: false` and an `error`) rather than a silent timeout.
"use strict";

const params = new URLSearchParams(location.search);
const scenarioName = params.get("scenario") || "offer";
const socket = new WebSocket("ws://127.0.0.1:" + params.get("ws") + "/interop");
const inbox = [];
const waiters = [];

function send(message) {
  socket.send(JSON.stringify(message));
}

function log(text) {
  document.getElementById("status").textContent = text;
  send({ type: "log", text: String(text) });
}

// Resolves with the next message from the peer whose `type` is `type`.
function receive(type, timeoutMs) {
  const index = inbox.findIndex((m) => m.type === type);
  if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0]);
  return new Promise((resolve, reject) => {
    const waiter = { type, resolve };
    waiters.push(waiter);
    setTimeout(() => {
      const at = waiters.indexOf(waiter);
      if (at >= 0) {
        waiters.splice(at, 1);
        reject(new Error("no '" + type + "' message from the peer within " + timeoutMs + " ms"));
      }
    }, timeoutMs);
  });
}

socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  const at = waiters.findIndex((w) => w.type === message.type);
  if (at >= 0) waiters.splice(at, 1)[0].resolve(message);
  else inbox.push(message);
};

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Polls `probe` (async, returns a value or null) every 250 ms until it returns non-null or the
// deadline passes; returns the last value (null on timeout).
async function poll(probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) return null;
    await sleep(250);
  }
}

function waitForIceGatheringComplete(pc, timeoutMs) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      if (pc.iceGatheringState === "complete") resolve();
    };
    pc.addEventListener("icegatheringstatechange", done);
    setTimeout(resolve, timeoutMs);
  });
}

// The inbound-rtp / outbound-rtp / candidate-pair entries of a getStats() report, as plain JSON.
async function summarizeStats(pc) {
  const report = await pc.getStats();
  const summary = { inbound: {}, outbound: {}, selectedPair: null };
  const byId = new Map();
  report.forEach((entry) => byId.set(entry.id, entry));
  report.forEach((entry) => {
    if (entry.type === "inbound-rtp") {
      const codec = byId.get(entry.codecId);
      summary.inbound[entry.kind] = {
        packetsReceived: entry.packetsReceived || 0,
        bytesReceived: entry.bytesReceived || 0,
        packetsLost: entry.packetsLost || 0,
        framesDecoded: entry.framesDecoded || 0,
        frameWidth: entry.frameWidth || 0,
        frameHeight: entry.frameHeight || 0,
        totalSamplesReceived: entry.totalSamplesReceived || 0,
        codec: codec ? codec.mimeType : null,
        ssrc: entry.ssrc,
      };
    } else if (entry.type === "outbound-rtp") {
      const codec = byId.get(entry.codecId);
      summary.outbound[entry.kind] = {
        packetsSent: entry.packetsSent || 0,
        bytesSent: entry.bytesSent || 0,
        framesEncoded: entry.framesEncoded || 0,
        codec: codec ? codec.mimeType : null,
        ssrc: entry.ssrc,
      };
    } else if (entry.type === "transport" && entry.selectedCandidatePairId) {
      const pair = byId.get(entry.selectedCandidatePairId);
      if (pair) {
        const local = byId.get(pair.localCandidateId) || {};
        const remote = byId.get(pair.remoteCandidateId) || {};
        summary.selectedPair = {
          local: local.address + ":" + local.port,
          remote: remote.address + ":" + remote.port,
          protocol: local.protocol,
        };
      }
      summary.dtlsState = entry.dtlsState;
      summary.srtpCipher = entry.srtpCipher;
    }
  });
  return summary;
}

function fakeMedia() {
  return navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 320, height: 240 } });
}

const scenarios = {};

// getUserMedia with the fake devices, one RTCPeerConnection, one offer.
scenarios.offer = async () => {
  const stream = await fakeMedia();
  const pc = new RTCPeerConnection();
  stream.getTracks().forEach((track) => pc.addTrack(track, stream));
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  await waitForIceGatheringComplete(pc, 5000);
  const sdp = pc.localDescription.sdp;
  pc.close();
  return {
    ok: true,
    tracks: stream.getTracks().map((t) => t.kind).sort(),
    offerHasVP8: /a=rtpmap:\d+ VP8\/90000/.test(sdp),
    offerHasOpus: /a=rtpmap:\d+ opus\/48000\/2/.test(sdp),
    candidates: sdp.split(/\r?\n/).filter((l) => l.startsWith("a=candidate:")),
    sdp,
  };
};

// Two RTCPeerConnections inside the browser, fake camera and microphone from one to the other,
// over loopback host candidates: proves fake media, VP8/Opus and loopback ICE work here.
scenarios.loopback = async () => {
  const stream = await fakeMedia();
  const sender = new RTCPeerConnection();
  const receiver = new RTCPeerConnection();
  sender.onicecandidate = (e) => e.candidate && receiver.addIceCandidate(e.candidate);
  receiver.onicecandidate = (e) => e.candidate && sender.addIceCandidate(e.candidate);
  stream.getTracks().forEach((track) => sender.addTrack(track, stream));
  await sender.setLocalDescription(await sender.createOffer());
  await receiver.setRemoteDescription(sender.localDescription);
  await receiver.setLocalDescription(await receiver.createAnswer());
  await sender.setRemoteDescription(receiver.localDescription);
  const stats = await poll(async () => {
    const s = await summarizeStats(receiver);
    const video = s.inbound.video;
    const audio = s.inbound.audio;
    return video && video.framesDecoded >= 10 && audio && audio.packetsReceived > 0 ? s : null;
  }, 15000);
  const last = stats || (await summarizeStats(receiver));
  const result = {
    ok: stats !== null,
    connectionState: receiver.connectionState,
    receiver: last,
    sender: await summarizeStats(sender),
  };
  if (!stats) result.error = "no decoded video within 15 s";
  sender.close();
  receiver.close();
  return result;
};

// The frame number InteropPeer's VirtualCamera stamps into its top rows (WCSMedia
// VirtualCamera.decodeFrameNumber): 32 blocks of `blockSize` pixels, white = 1, black = 0,
// most significant bit first; read from the inner half of each block. Null when a block is
// ambiguous (not one of our pictures, or damaged).
function decodeFrameNumber(rgba, width) {
  const size = Math.max(2, Math.min(16, Math.floor(width / 32)));
  const inset = Math.floor(size / 4);
  let number = 0;
  for (let bit = 0; bit < 32; bit++) {
    let sum = 0;
    let count = 0;
    for (let row = inset; row < size - inset; row++) {
      for (let x = bit * size + inset; x < (bit + 1) * size - inset; x++) {
        const at = (row * width + x) * 4;
        sum += 0.299 * rgba[at] + 0.587 * rgba[at + 1] + 0.114 * rgba[at + 2];
        count++;
      }
    }
    const mean = sum / count;
    if (Math.abs(mean - 128) <= 40) return null;
    number = number * 2 + (mean > 128 ? 1 : 0);
  }
  return number;
}

// Renders the received video and reads the stamped frame number `samples` times, 100 ms apart.
async function readFrameNumbers(video, samples) {
  const numbers = [];
  const canvas = document.createElement("canvas");
  for (let i = 0; i < samples; i++) {
    if (video.videoWidth > 0) {
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      const context = canvas.getContext("2d", { willReadFrequently: true });
      context.drawImage(video, 0, 0);
      const rows = Math.max(2, Math.min(16, Math.floor(canvas.width / 32)));
      numbers.push(decodeFrameNumber(context.getImageData(0, 0, canvas.width, rows).data, canvas.width));
    }
    await sleep(100);
  }
  return numbers;
}

// Plays received video tracks in a muted <video> so the page can look at the pixels.
function renderRemoteVideo(pc, remoteTracks) {
  const video = document.createElement("video");
  video.muted = true;
  video.autoplay = true;
  document.body.appendChild(video);
  pc.ontrack = (event) => {
    remoteTracks.push(event.track.kind);
    if (event.track.kind === "video") {
      video.srcObject = new MediaStream([event.track]);
      video.play().catch(() => {});
    }
  };
  return video;
}

// Polls until both sides have decoded each other's video (10 frames) and received audio (25
// packets), at most 15 s; the Swift side's counts come from `peerStatus` replies.
async function exchangeMediaWithPeer(pc, remoteTracks, video, extra) {
  let peer = null;
  const stats = await poll(async () => {
    const s = await summarizeStats(pc);
    send({ type: "peerStatus" });
    peer = await receive("peerStatus", 2000);
    const video = s.inbound.video;
    const audio = s.inbound.audio;
    const received = peer.received || {};
    const browserDone =
      video && video.framesDecoded >= 10 && audio && audio.packetsReceived >= 25;
    const peerDone = received.vp8FramesDecoded >= 10 && received.opusFramesDecoded >= 25;
    return browserDone && peerDone ? s : null;
  }, 15000);
  const frameNumbers = stats ? await readFrameNumbers(video, 10) : [];
  const last = stats || (await summarizeStats(pc));
  const result = Object.assign(
    {
      ok: stats !== null,
      frameNumbers,
      connectionState: pc.connectionState,
      iceConnectionState: pc.iceConnectionState,
      remoteTracks: remoteTracks.sort(),
      browser: last,
      peer,
    },
    extra
  );
  if (!stats) result.error = "media did not flow both ways within 15 s";
  pc.close();
  return result;
}

// The browser offers sendrecv audio+video (fake devices) to the Swift PeerConnection in
// InteropPeer (full ICE for `peer`, ICE-lite for `peer-lite`), which answers and sends Opus and
// VP8 back.
async function callSwiftPeer() {
  const stream = await fakeMedia();
  const pc = new RTCPeerConnection();
  stream.getTracks().forEach((track) => pc.addTrack(track, stream));
  const remoteTracks = [];
  const video = renderRemoteVideo(pc, remoteTracks);
  await pc.setLocalDescription(await pc.createOffer());
  await waitForIceGatheringComplete(pc, 5000);
  send({ type: "offer", sdp: pc.localDescription.sdp });
  const answer = await receive("answer", 10000);
  if (answer.error) throw new Error("peer could not answer: " + answer.error);
  await pc.setRemoteDescription({ type: "answer", sdp: answer.sdp });
  return exchangeMediaWithPeer(pc, remoteTracks, video, {
    answerHasIceLite: /a=ice-lite/.test(answer.sdp),
  });
}

// The Swift PeerConnection offers sendrecv Opus + VP8 (SDPOfferBuilder); the browser answers
// with its fake camera and microphone on the offered transceivers.
scenarios["peer-offer"] = async () => {
  const stream = await fakeMedia();
  const pc = new RTCPeerConnection();
  const remoteTracks = [];
  const video = renderRemoteVideo(pc, remoteTracks);
  send({ type: "ready" });
  const offer = await receive("offer", 10000);
  if (offer.error) throw new Error("peer could not offer: " + offer.error);
  await pc.setRemoteDescription({ type: "offer", sdp: offer.sdp });
  for (const transceiver of pc.getTransceivers()) {
    const track = stream.getTracks().find((t) => t.kind === transceiver.receiver.track.kind);
    if (!track) continue;
    await transceiver.sender.replaceTrack(track);
    transceiver.sender.setStreams(stream);
    transceiver.direction = "sendrecv";
  }
  await pc.setLocalDescription(await pc.createAnswer());
  await waitForIceGatheringComplete(pc, 5000);
  const answerSdp = pc.localDescription.sdp;
  send({ type: "answer", sdp: answerSdp });
  const applied = await receive("answerApplied", 5000);
  if (applied.error) throw new Error("peer rejected the answer: " + applied.error);
  return exchangeMediaWithPeer(pc, remoteTracks, video, {
    offerSdp: offer.sdp,
    answerSdp,
  });
};

scenarios.peer = callSwiftPeer;
scenarios["peer-lite"] = callSwiftPeer;

// A minimal WCS Web SDK stand-in: the JSON-over-WebSocket protocol of wcs-protocol.md, with
// ping answered by pong and every stream status kept in order per mediaSessionId.
async function openWcs(url) {
  const ws = new WebSocket(url);
  const pending = [];
  const waiters = [];
  const statuses = {};
  const transcript = [];
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.message === "ping") {
      ws.send(JSON.stringify({ message: "pong", data: [null] }));
      return;
    }
    const first = (message.data || [])[0];
    if (message.message === "notifyStreamStatusEvent" && first) {
      (statuses[first.mediaSessionId] = statuses[first.mediaSessionId] || []).push(first.status);
      transcript.push(message.message + " " + first.status);
    } else {
      transcript.push(message.message);
    }
    const at = waiters.findIndex((w) => w.match(message));
    if (at >= 0) waiters.splice(at, 1)[0].resolve(message);
    else pending.push(message);
  };
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("WebSocket to the WCS server failed"));
  });
  return {
    statuses,
    transcript,
    send(name, object) {
      ws.send(JSON.stringify({ message: name, data: [object] }));
    },
    wait(match, timeoutMs, what) {
      const at = pending.findIndex(match);
      if (at >= 0) return Promise.resolve(pending.splice(at, 1)[0]);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) {
            waiters.splice(index, 1);
            reject(new Error("no " + what + " from the WCS server within " + timeoutMs + " ms"));
          }
        }, timeoutMs);
      });
    },
    close() {
      ws.close();
    },
  };
}

class StreamFailed extends Error {
  constructor(id, info) {
    super("stream " + id + " FAILED: " + info);
    this.info = info;
  }
}

// A scenario's error, with the server's reason when a stream FAILED.
function recordFailure(result, error) {
  result.error = String(error);
  if (error instanceof StreamFailed) result.failedInfo = error.info;
}

// Waits for one of `wanted` statuses of stream `id`; FAILED (status or `fail` message) throws.
async function waitForStatus(wcs, id, wanted, timeoutMs) {
  const message = await wcs.wait(
    (m) =>
      (m.message === "notifyStreamStatusEvent" &&
        m.data[0].mediaSessionId === id &&
        (wanted.includes(m.data[0].status) || m.data[0].status === "FAILED")) ||
      (m.message === "fail" && m.data[0] && m.data[0].id === id),
    timeoutMs,
    wanted.join("/") + " for " + id
  );
  const stream = message.data[0];
  if (message.message === "fail" || (stream.status === "FAILED" && !wanted.includes("FAILED"))) {
    throw new StreamFailed(id, stream.info);
  }
  return stream;
}

// Offer (already set locally) to the server with publishStream/playStream, apply the
// setRemoteSDP answer, wait for PUBLISHING/PLAYING.
async function negotiateWcsStream(wcs, pc, request, wanted) {
  wcs.send(request.published ? "publishStream" : "playStream", request);
  const id = request.mediaSessionId;
  const message = await wcs.wait(
    (m) =>
      (m.message === "setRemoteSDP" && m.data[0] === id) ||
      (m.message === "notifyStreamStatusEvent" &&
        m.data[0].mediaSessionId === id &&
        m.data[0].status === "FAILED") ||
      (m.message === "fail" && m.data[0] && m.data[0].id === id),
    10000,
    "setRemoteSDP for " + id
  );
  if (message.message !== "setRemoteSDP") throw new StreamFailed(id, message.data[0].info);
  await pc.setRemoteDescription({ type: "answer", sdp: message.data[1] });
  return waitForStatus(wcs, id, [wanted], 10000);
}

// The Web SDK's `connection` message; the session status from getUserData.
async function connectWcs(wcs) {
  wcs.send("connection", {
    appKey: "defaultApp",
    mediaProviders: ["WebRTC"],
    clientVersion: "2.0",
    clientOSVersion: navigator.appVersion,
    clientBrowserVersion: navigator.userAgent,
    custom: { test: "chromium-interop" },
  });
  const userData = await wcs.wait((m) => m.message === "getUserData", 5000, "getUserData");
  return userData.data[0].status;
}

const wcsBitrates = { bitrate: 0, minBitrate: 0, maxBitrate: 0 };

function wcsStreamFields(streamName) {
  return { name: streamName, hasVideo: true, hasAudio: true, status: "PENDING" };
}

// Publishes `stream` as `streamName` (publishStream → PUBLISHING); the connection and its id.
// With `videoCodec` ("video/H264"), the offer lists only that video codec (and its RTX),
// H.264 constrained baseline with packetization-mode 1 first: Chromium lists baseline (42001f)
// first, which the relay would keep and a constrained-baseline-only player cannot take.
async function publishToWcs(wcs, stream, streamName, record, videoCodec) {
  const publisher = new RTCPeerConnection({ bundlePolicy: "max-compat" });
  stream.getTracks().forEach((track) => {
    const transceiver = publisher.addTransceiver(track, {
      direction: "sendonly",
      streams: [stream],
    });
    if (videoCodec && track.kind === "video") {
      const codecs = RTCRtpSender.getCapabilities("video").codecs.filter(
        (c) => c.mimeType === videoCodec || c.mimeType === "video/rtx"
      );
      const rank = (c) =>
        /profile-level-id=42e0/.test(c.sdpFmtpLine || "") &&
        /packetization-mode=1/.test(c.sdpFmtpLine || "")
          ? 0
          : 1;
      codecs.sort((a, b) => rank(a) - rank(b));
      transceiver.setCodecPreferences(codecs);
    }
  });
  await publisher.setLocalDescription(await publisher.createOffer());
  const publishId = crypto.randomUUID();
  try {
    await negotiateWcsStream(
      wcs,
      publisher,
      Object.assign(
        { mediaSessionId: publishId, published: true, record },
        wcsStreamFields(streamName),
        wcsBitrates,
        { mediaProvider: "WebRTC", sdp: publisher.localDescription.sdp }
      ),
      "PUBLISHING"
    );
  } catch (error) {
    publisher.close();
    throw error;
  }
  return { publisher, publishId };
}

// Plays `streamName` (playStream → PLAYING); the connection, its id and the PLAYING status.
async function playFromWcs(wcs, streamName) {
  const player = new RTCPeerConnection({ bundlePolicy: "max-compat" });
  player.addTransceiver("audio", { direction: "recvonly" });
  player.addTransceiver("video", { direction: "recvonly" });
  await player.setLocalDescription(await player.createOffer());
  const playId = crypto.randomUUID();
  try {
    const playing = await negotiateWcsStream(
      wcs,
      player,
      Object.assign(
        { mediaSessionId: playId, published: false, record: false },
        wcsStreamFields(streamName),
        wcsBitrates,
        { width: 0, height: 0, quality: 0, mediaProvider: "WebRTC", sdp: player.localDescription.sdp }
      ),
      "PLAYING"
    );
    return { player, playId, playing };
  } catch (error) {
    player.close();
    throw error;
  }
}

// Runs `body(wcs, result, connections)` on a WCS session: a thrown error goes into `result`
// (with the FAILED info), and whatever happens the connections pushed onto `connections` and
// the WebSocket are closed and the statuses and transcript recorded.
async function runWcsScenario(body) {
  const wcs = await openWcs(params.get("wcs"));
  const result = { ok: false };
  const connections = [];
  try {
    await body(wcs, result, connections);
  } catch (error) {
    recordFailure(result, error);
  } finally {
    connections.forEach((pc) => pc.close());
    result.statuses = wcs.statuses;
    result.transcript = wcs.transcript;
    wcs.close();
  }
  return result;
}

// Publishes the fake camera and microphone to the WCS server (record: true), plays the stream
// back on a second connection, checks the played video decodes, then unpublishes and collects
// the record name. Mirrors what the Web SDK sends (wcs-protocol.md §3.1, §8).
const publishPlayRecord = (videoCodec) =>
  runWcsScenario(async (wcs, result, connections) => {
    result.sessionStatus = await connectWcs(wcs);

    const stream = await fakeMedia();
    const streamName = "chromium-" + Date.now();
    result.streamName = streamName;
    const published = await publishToWcs(wcs, stream, streamName, true, videoCodec);
    const publisher = published.publisher;
    connections.push(publisher);
    const publishId = published.publishId;
    result.publishId = publishId;
    const publishingSince = performance.now();

    const played = await playFromWcs(wcs, streamName);
    const player = played.player;
    connections.push(player);
    const playId = played.playId;
    result.playId = playId;
    const playing = played.playing;
    result.playingCodecs = { audio: playing.audioCodec, video: playing.videoCodec };

    const decoded = await poll(async () => {
      const s = await summarizeStats(player);
      const video = s.inbound.video;
      const audio = s.inbound.audio;
      return video && video.framesDecoded >= 20 && audio && audio.packetsReceived >= 25 ? s : null;
    }, 15000);
    result.player = decoded || (await summarizeStats(player));
    result.publisher = await summarizeStats(publisher);
    // Record at least 4 s so the file's duration means something.
    const minimumMs = 4000;
    const elapsed = performance.now() - publishingSince;
    if (elapsed < minimumMs) await sleep(minimumMs - elapsed);

    wcs.send("unPublishStream", {
      mediaSessionId: publishId,
      name: streamName,
      published: true,
      hasVideo: true,
      hasAudio: true,
      status: "PUBLISHING",
      record: false,
    });
    result.publishSeconds = (performance.now() - publishingSince) / 1000;
    publisher.close();
    const unpublished = await waitForStatus(wcs, publishId, ["UNPUBLISHED"], 10000);
    result.recordName = unpublished.recordName || null;
    try {
      const stopped = await waitForStatus(wcs, playId, ["STOPPED", "FAILED"], 5000);
      result.playerEnd = { status: stopped.status, info: stopped.info };
    } catch (error) {
      result.playerEnd = { error: String(error) };
    }
    result.ok = decoded !== null && result.recordName !== null;
    if (!decoded) result.error = "played video did not decode within 15 s";
    else if (!result.recordName) result.error = "UNPUBLISHED without recordName";
  });
scenarios.wcs = () => publishPlayRecord(null);
// The same with the publisher sending H.264 only: relayed as H.264, recorded to MP4.
scenarios["wcs-h264"] = () => publishPlayRecord("video/H264");
// The page publishes H.264 only and the Swift SDK (the Player example, run by the peer) plays
// it: the relay passes H.264 through, so what the SDK decodes is Chromium's H.264.
scenarios["wcs-h264-sdk"] = () =>
  runWcsScenario(async (wcs, result, connections) => {
    result.sessionStatus = await connectWcs(wcs);
    const stream = await fakeMedia();
    const streamName = "chromium-h264-" + Date.now();
    const published = await publishToWcs(wcs, stream, streamName, false, "video/H264");
    connections.push(published.publisher);
    send({ type: "sdk-play", name: streamName });
    const played = await receive("sdk-played", 30000);
    result.sdk = { exitStatus: played.exitStatus, summary: played.summary, output: played.output };
    result.publisher = await summarizeStats(published.publisher);
    result.ok = true;
  });

// The Swift SDK (the Streamer example, run by the peer) publishes the virtual camera as H.264
// only; the page plays it through the relay, decodes it and reads the camera's frame numbers.
scenarios["wcs-sdk-h264"] = () =>
  runWcsScenario(async (wcs, result, connections) => {
    result.sessionStatus = await connectWcs(wcs);
    const streamName = "swift-h264-" + Date.now();
    send({ type: "sdk-publish", name: streamName });
    await receive("sdk-publishing", 5000);
    let played = null;
    const deadline = performance.now() + 10000;
    while (!played) {
      try {
        played = await playFromWcs(wcs, streamName);
      } catch (error) {
        if (performance.now() > deadline) throw error;
        await sleep(300);
      }
    }
    const player = played.player;
    connections.push(player);
    const receiver = player.getReceivers().find((r) => r.track && r.track.kind === "video");
    const video = document.createElement("video");
    video.muted = true;
    video.autoplay = true;
    document.body.appendChild(video);
    video.srcObject = new MediaStream([receiver.track]);
    video.play().catch(() => {});
    const decoded = await poll(async () => {
      const s = await summarizeStats(player);
      return s.inbound.video && s.inbound.video.framesDecoded >= 20 ? s : null;
    }, 15000);
    result.player = decoded || (await summarizeStats(player));
    result.frameNumbers = await readFrameNumbers(video, 10);
    result.ok = decoded !== null;
    if (!decoded) result.error = "played H.264 did not decode within 15 s";
  });

// The video counters loss recovery is judged by (W3C webrtc-stats: RTCInboundRtpStreamStats,
// RTCOutboundRtpStreamStats), from one getStats() report; null where the kind is absent.
async function videoRecoveryStats(pc) {
  const report = await pc.getStats();
  const summary = { inbound: null, outbound: null };
  report.forEach((entry) => {
    if (entry.kind !== "video") return;
    if (entry.type === "inbound-rtp") {
      summary.inbound = {
        framesDecoded: entry.framesDecoded || 0,
        framesReceived: entry.framesReceived || 0,
        framesDropped: entry.framesDropped || 0,
        keyFramesDecoded: entry.keyFramesDecoded || 0,
        packetsReceived: entry.packetsReceived || 0,
        packetsLost: entry.packetsLost || 0,
        retransmittedPacketsReceived: entry.retransmittedPacketsReceived || 0,
        nackCount: entry.nackCount || 0,
        pliCount: entry.pliCount || 0,
        firCount: entry.firCount || 0,
        freezeCount: entry.freezeCount || 0,
        totalFreezesDuration: entry.totalFreezesDuration || 0,
        frameWidth: entry.frameWidth || 0,
        frameHeight: entry.frameHeight || 0,
      };
    } else if (entry.type === "outbound-rtp") {
      summary.outbound = {
        framesEncoded: entry.framesEncoded || 0,
        framesSent: entry.framesSent || 0,
        keyFramesEncoded: entry.keyFramesEncoded || 0,
        packetsSent: entry.packetsSent || 0,
        retransmittedPacketsSent: entry.retransmittedPacketsSent || 0,
        nackCount: entry.nackCount || 0,
        pliCount: entry.pliCount || 0,
        frameWidth: entry.frameWidth || 0,
        frameHeight: entry.frameHeight || 0,
      };
    }
  });
  return summary;
}

// Loss figures for LossBench and the kernel-loss test: publishes the fake camera at 640x360,
// 30 fps, plays it back through the WCS server for `seconds` (default 8) and reports the frames
// the player decoded against those the publisher sent over the same span (from the first
// decoded frame on), the longest time without a newly decoded frame (getStats polled every
// 50 ms), times to PUBLISHING and PLAYING, and both sides' recovery counters.
scenarios["wcs-loss"] = () =>
  runWcsScenario(async (wcs, result, connections) => {
    const seconds = Number(params.get("seconds") || 8);
    result.seconds = seconds;
    result.sessionStatus = await connectWcs(wcs);
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: true,
      video: { width: 640, height: 360, frameRate: 30 },
    });
    const streamName = "chromium-loss-" + Date.now();
    const publishStart = performance.now();
    const published = await publishToWcs(wcs, stream, streamName, false);
    const publisher = published.publisher;
    connections.push(publisher);
    result.toPublishing = (performance.now() - publishStart) / 1000;
    const playStart = performance.now();
    const played = await playFromWcs(wcs, streamName);
    const player = played.player;
    connections.push(player);
    const playingAt = performance.now();
    result.toPlaying = (playingAt - playStart) / 1000;

    // Until the first decoded frame (at most 10 s), then `seconds` of media.
    let first = null;
    let last = null;
    let lastDecoded = 0;
    let longestGapMs = 0;
    let end = playingAt + 10000;
    while (performance.now() < end) {
      const [received, sent] = await Promise.all([
        videoRecoveryStats(player),
        videoRecoveryStats(publisher),
      ]);
      const now = performance.now();
      const decoded = received.inbound ? received.inbound.framesDecoded : 0;
      if (first === null && decoded > 0) {
        first = { at: now, received, sent };
        result.firstFrame = (now - playingAt) / 1000;
        end = now + seconds * 1000;
      }
      if (decoded > lastDecoded) {
        if (last !== null) longestGapMs = Math.max(longestGapMs, now - last.at);
        lastDecoded = decoded;
        last = { at: now };
      }
      result.end = { received, sent };
      await sleep(50);
    }
    if (last !== null) longestGapMs = Math.max(longestGapMs, performance.now() - last.at);
    result.start = first ? { received: first.received, sent: first.sent } : null;
    result.longestGap = first ? longestGapMs / 1000 : null;
    if (first && result.end.received.inbound && result.end.sent.outbound) {
      result.decoded =
        result.end.received.inbound.framesDecoded - first.received.inbound.framesDecoded;
      result.sent = result.end.sent.outbound.framesSent - first.sent.outbound.framesSent;
    }
    result.ok = first !== null;
    if (!first) result.error = "no played frame decoded within 10 s of PLAYING";
  });

// The room protocol of wcs-rooms-and-calls.md §A, as the Web SDK's room module speaks it: a
// roomApp session with custom.login, commands as sendData, events as OnDataEvent. Joins the
// room the Swift participant is in, publishes the fake camera as a room stream, plays the
// Swift participant's stream, and exchanges one chat message each way.
scenarios.room = async () => {
  const wcs = await openWcs(params.get("wcs"));
  const room = params.get("room");
  const swift = params.get("swift");
  const login = "browser";
  const result = { ok: false, events: [] };
  let publisher = null;
  let player = null;
  const command = (payload) => {
    const operationId = crypto.randomUUID();
    wcs.send("sendData", { operationId, payload });
    return wcs
      .wait(
        (m) => m.message === "DataStatusEvent" && m.data[0].operationId === operationId,
        10000,
        payload.command + " reply"
      )
      .then((m) => m.data[0]);
  };
  const roomEvent = (name, timeoutMs) =>
    wcs
      .wait(
        (m) =>
          m.message === "OnDataEvent" &&
          m.data[0].payload &&
          m.data[0].payload.roomName === room &&
          m.data[0].payload.name === name,
        timeoutMs,
        name + " of room " + room
      )
      .then((m) => {
        result.events.push(name);
        return m.data[0].payload.info;
      });
  try {
    wcs.send("connection", {
      appKey: "roomApp",
      mediaProviders: ["WebRTC"],
      clientVersion: "2.0",
      clientOSVersion: navigator.appVersion,
      clientBrowserVersion: navigator.userAgent,
      custom: { login },
    });
    await wcs.wait((m) => m.message === "getUserData", 5000, "getUserData");
    const joined = await command({ command: "join", options: { name: room } });
    result.joinStatus = joined.status;
    if (joined.status !== "ACCEPTED") throw new Error("join " + joined.status + ": " + joined.info);
    const state = await roomEvent("STATE", 5000);
    result.state = state;
    // The Swift participant's stream: in STATE when it published first, else PUBLISHED.
    let swiftStream = null;
    for (const entry of state) {
      if (typeof entry === "object" && entry.login === swift) swiftStream = entry.name;
    }
    if (!swiftStream) {
      const published = await roomEvent("PUBLISHED", 15000);
      if (published.login === swift) swiftStream = published.name;
    }
    result.swiftStream = swiftStream;

    const stream = await fakeMedia();
    publisher = new RTCPeerConnection({ bundlePolicy: "max-compat" });
    stream.getTracks().forEach((track) =>
      publisher.addTransceiver(track, { direction: "sendonly", streams: [stream] })
    );
    await publisher.setLocalDescription(await publisher.createOffer());
    const suffix = crypto.randomUUID().slice(0, 4);
    const common = { hasVideo: true, hasAudio: true, status: "PENDING", custom: { name: room } };
    const bitrates = { bitrate: 0, minBitrate: 0, maxBitrate: 0 };
    result.publishName = room + "-" + login + "-" + suffix;
    await negotiateWcsStream(
      wcs,
      publisher,
      Object.assign(
        { mediaSessionId: crypto.randomUUID(), name: result.publishName, published: true },
        common,
        bitrates,
        { record: false, mediaProvider: "WebRTC", sdp: publisher.localDescription.sdp }
      ),
      "PUBLISHING"
    );

    player = new RTCPeerConnection({ bundlePolicy: "max-compat" });
    player.addTransceiver("audio", { direction: "recvonly" });
    player.addTransceiver("video", { direction: "recvonly" });
    await player.setLocalDescription(await player.createOffer());
    await negotiateWcsStream(
      wcs,
      player,
      Object.assign(
        { mediaSessionId: crypto.randomUUID(), name: swiftStream, published: false },
        common,
        bitrates,
        { record: false, width: 0, height: 0, quality: 0, mediaProvider: "WebRTC" },
        { sdp: player.localDescription.sdp }
      ),
      "PLAYING"
    );
    const played = await poll(async () => {
      const s = await summarizeStats(player);
      return s.inbound.video && s.inbound.video.framesDecoded >= 20 ? s : null;
    }, 15000);
    result.player = played || (await summarizeStats(player));

    const sent = await command({
      command: "sendMessage",
      options: { roomConfig: { name: room }, to: swift, text: "hello swift from chromium" },
    });
    result.messageStatus = sent.status;
    // The Swift side greets once it decodes our video.
    result.message = await roomEvent("MESSAGE", 15000);
    // Stay a little, so the Swift side keeps decoding, then leave as the Web SDK does.
    await sleep(1500);
    const left = await command({ command: "leave", options: { name: room } });
    result.leaveStatus = left.status;
    result.ok =
      played !== null &&
      result.messageStatus === "ACCEPTED" &&
      result.message.from === swift &&
      result.leaveStatus === "ACCEPTED";
    if (!played) result.error = "the Swift participant's video did not decode within 15 s";
  } catch (error) {
    recordFailure(result, error);
  } finally {
    for (const pc of [publisher, player]) if (pc) pc.close();
    result.transcript = wcs.transcript;
    wcs.close();
  }
  return result;
};

async function main() {
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("WebSocket to the peer failed"));
  });
  send({ type: "hello", scenario: scenarioName, userAgent: navigator.userAgent });
  const scenario = scenarios[scenarioName];
  let result;
  try {
    if (!scenario) throw new Error("unknown scenario " + scenarioName);
    result = await scenario();
  } catch (error) {
    result = { ok: false, error: String((error && error.stack) || error) };
  }
  result.type = "result";
  result.scenario = scenarioName;
  send(result);
  document.getElementById("status").textContent = "done";
}

main().catch((error) => log("harness failed: " + error));
