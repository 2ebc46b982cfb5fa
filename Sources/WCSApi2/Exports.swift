import WCSMedia
// Users write `import FPWCSApi2Swift` only; the media types they pass (renderers, capturers,
// frames) live in WCSMedia and are re-exported here by name, so WCSMedia's internals stay out of
// the app's namespace. WCSTransport is exported whole: options take a `SignalingTransport`.
@_exported import WCSTransport

/// Receives video frames: the Linux `display` (see `WCSMedia.VideoRenderer`).
public typealias VideoRenderer = WCSMedia.VideoRenderer
/// One I420 picture (see `WCSMedia.VideoFrame`).
public typealias VideoFrame = WCSMedia.VideoFrame
/// A renderer calling a closure per frame (see `WCSMedia.VideoFrameCallbackRenderer`).
public typealias VideoFrameCallbackRenderer = WCSMedia.VideoFrameCallbackRenderer
/// Interleaved 16-bit PCM (see `WCSMedia.AudioFrame`).
public typealias AudioFrame = WCSMedia.AudioFrame
/// Base class of app video sources (see `WCSMedia.RTCVideoCapturer`).
public typealias RTCVideoCapturer = WCSMedia.RTCVideoCapturer
/// Capturer hooks (see `WCSMedia.FPWCSVideoCapturer`).
public typealias FPWCSVideoCapturer = WCSMedia.FPWCSVideoCapturer
/// A camera or microphone (see `WCSMedia.CaptureDevice`).
public typealias CaptureDevice = WCSMedia.CaptureDevice
/// A capture size (see `WCSMedia.VideoCaptureFormat`).
public typealias VideoCaptureFormat = WCSMedia.VideoCaptureFormat
/// The media engine protocol (see `WCSMedia.MediaBackend`).
public typealias MediaBackend = WCSMedia.MediaBackend
/// One WebRTC connection (see `WCSMedia.MediaConnection`).
public typealias MediaConnection = WCSMedia.MediaConnection
/// What a connection must send/receive (see `WCSMedia.MediaConnectionRequest`).
public typealias MediaConnectionRequest = WCSMedia.MediaConnectionRequest
/// Connection state (see `WCSMedia.MediaConnectionState`).
public typealias MediaConnectionState = WCSMedia.MediaConnectionState
/// Why a connection failed (see `WCSMedia.MediaConnectionFailure`).
public typealias MediaConnectionFailure = WCSMedia.MediaConnectionFailure
/// Connection counters (see `WCSMedia.MediaConnectionStats`).
public typealias MediaConnectionStats = WCSMedia.MediaConnectionStats
/// Media engine errors (see `WCSMedia.MediaBackendError`).
public typealias MediaBackendError = WCSMedia.MediaBackendError
/// The backend used when none is installed (see `WCSMedia.UnavailableMediaBackend`).
public typealias UnavailableMediaBackend = WCSMedia.UnavailableMediaBackend
/// A desktop window showing video, SDL2 (see `WCSMedia.WindowRenderer`).
public typealias WindowRenderer = WCSMedia.WindowRenderer
/// Why a window could not open (see `WCSMedia.WindowRendererError`).
public typealias WindowRendererError = WCSMedia.WindowRendererError
/// A window's read-back pixels (see `WCSMedia.WindowPixels`).
public typealias WindowPixels = WCSMedia.WindowPixels
/// Keeps the newest frame (see `WCSMedia.LastFrameRenderer`).
public typealias LastFrameRenderer = WCSMedia.LastFrameRenderer
/// PNG/JPEG files of pictures (see `WCSMedia.PictureFile`).
public typealias PictureFile = WCSMedia.PictureFile
/// A snapshot's file format (see `WCSMedia.PictureFormat`).
public typealias PictureFormat = WCSMedia.PictureFormat
/// Why a picture could not be encoded or decoded (see `WCSMedia.PictureFileError`).
public typealias PictureFileError = WCSMedia.PictureFileError
/// One I420 picture of the codec layer (see `WCSMedia.I420Image`).
public typealias I420Image = WCSMedia.I420Image
