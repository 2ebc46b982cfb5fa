import WCSCodecs
import WCSDevices
import WCSMediaSeam
// Users write `import FPWCSApi2Swift` only; the media types they pass (renderers, capturers,
// frames) live in WCSMediaSeam and are re-exported here by name, so the media layers stay out of
// the app's namespace. WCSTransport is exported whole: options take a `SignalingTransport`.
@_exported import WCSTransport

/// Receives video frames: the Linux `display` (see `WCSMediaSeam.VideoRenderer`).
public typealias VideoRenderer = WCSMediaSeam.VideoRenderer
/// One I420 picture (see `WCSMediaSeam.VideoFrame`).
public typealias VideoFrame = WCSMediaSeam.VideoFrame
/// A renderer calling a closure per frame (see `WCSMediaSeam.VideoFrameCallbackRenderer`).
public typealias VideoFrameCallbackRenderer = WCSMediaSeam.VideoFrameCallbackRenderer
/// Interleaved 16-bit PCM (see `WCSMediaSeam.AudioFrame`).
public typealias AudioFrame = WCSMediaSeam.AudioFrame
/// Base class of app video sources (see `WCSMediaSeam.RTCVideoCapturer`).
public typealias RTCVideoCapturer = WCSMediaSeam.RTCVideoCapturer
/// Capturer hooks (see `WCSMediaSeam.FPWCSVideoCapturer`).
public typealias FPWCSVideoCapturer = WCSMediaSeam.FPWCSVideoCapturer
/// A camera or microphone (see `WCSMediaSeam.CaptureDevice`).
public typealias CaptureDevice = WCSMediaSeam.CaptureDevice
/// A capture size (see `WCSMediaSeam.VideoCaptureFormat`).
public typealias VideoCaptureFormat = WCSMediaSeam.VideoCaptureFormat
/// The media engine protocol (see `WCSMediaSeam.MediaBackend`).
public typealias MediaBackend = WCSMediaSeam.MediaBackend
/// One WebRTC connection (see `WCSMediaSeam.MediaConnection`).
public typealias MediaConnection = WCSMediaSeam.MediaConnection
/// What a connection must send/receive (see `WCSMediaSeam.MediaConnectionRequest`).
public typealias MediaConnectionRequest = WCSMediaSeam.MediaConnectionRequest
/// An H.264 profile above baseline to offer and send (see `WCSMediaSeam.H264OfferedProfile`).
public typealias H264OfferedProfile = WCSMediaSeam.H264OfferedProfile
/// Connection state (see `WCSMediaSeam.MediaConnectionState`).
public typealias MediaConnectionState = WCSMediaSeam.MediaConnectionState
/// Why a connection failed (see `WCSMediaSeam.MediaConnectionFailure`).
public typealias MediaConnectionFailure = WCSMediaSeam.MediaConnectionFailure
/// Connection counters (see `WCSMediaSeam.MediaConnectionStats`).
public typealias MediaConnectionStats = WCSMediaSeam.MediaConnectionStats
/// Media engine errors (see `WCSMediaSeam.MediaBackendError`).
public typealias MediaBackendError = WCSMediaSeam.MediaBackendError
/// The backend used when none is installed (see `WCSMediaSeam.UnavailableMediaBackend`).
public typealias UnavailableMediaBackend = WCSMediaSeam.UnavailableMediaBackend
/// A desktop window showing video, SDL2 (see `WCSDevices.WindowRenderer`).
public typealias WindowRenderer = WCSDevices.WindowRenderer
/// Why a window could not open (see `WCSDevices.WindowRendererError`).
public typealias WindowRendererError = WCSDevices.WindowRendererError
/// A window's read-back pixels (see `WCSDevices.WindowPixels`).
public typealias WindowPixels = WCSDevices.WindowPixels
/// Keeps the newest frame (see `WCSCodecs.LastFrameRenderer`).
public typealias LastFrameRenderer = WCSCodecs.LastFrameRenderer
/// PNG/JPEG files of pictures (see `WCSCodecs.PictureFile`).
public typealias PictureFile = WCSCodecs.PictureFile
/// A snapshot's file format (see `WCSCodecs.PictureFormat`).
public typealias PictureFormat = WCSCodecs.PictureFormat
/// Why a picture could not be encoded or decoded (see `WCSCodecs.PictureFileError`).
public typealias PictureFileError = WCSCodecs.PictureFileError
/// One I420 picture of the codec layer (see `WCSCodecs.I420Image`).
public typealias I420Image = WCSCodecs.I420Image
