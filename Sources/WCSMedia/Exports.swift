// The umbrella over the media layers, so `import WCSMedia` keeps working for the examples, the
// benchmarks and the tests. The layers, bottom up: WCSMediaSeam, WCSCodecs, WCSProtocols,
// WCSEventLoop, WCSRecording, WCSDevices, WCSPeerConnection, WCSEngine (README, "Layout").
// Libraries import the layer they need instead.
@_exported import WCSCodecs
@_exported import WCSDevices
@_exported import WCSEngine
@_exported import WCSEventLoop
@_exported import WCSMediaSeam
@_exported import WCSPeerConnection
@_exported import WCSProtocols
@_exported import WCSRecording
