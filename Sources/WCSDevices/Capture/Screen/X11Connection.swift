import CMediaDevices

/// An xcb connection to one screen's root window with an optional MIT-SHM segment for the image:
/// the resource owner behind `X11ScreenCapturer`. Not thread-safe; the capturer keeps it behind a
/// lock.
final class X11Connection {
  let connection: OpaquePointer
  let root: xcb_window_t
  let width: Int
  let height: Int
  let byteOrderMSBFirst: Bool
  private var shmSegment: xcb_shm_seg_t = 0
  private var shmAddress: UnsafeMutableRawPointer?

  var usesSharedMemory: Bool { shmAddress != nil }

  init(display: String?, useSharedMemory: Bool) throws(X11CaptureError) {
    let name = display ?? getenvString("DISPLAY")
    guard let name, !name.isEmpty else { throw .noDisplay }
    var screenNumber: Int32 = 0
    guard let connection = xcb_connect(name, &screenNumber) else {
      throw .connectionFailed(display: name, code: 3)
    }
    let code = xcb_connection_has_error(connection)
    guard code == 0 else {
      xcb_disconnect(connection)
      throw .connectionFailed(display: name, code: code)
    }
    guard let setup = xcb_get_setup(connection) else {
      xcb_disconnect(connection)
      throw .connectionFailed(display: name, code: 1)
    }
    var iterator = xcb_setup_roots_iterator(setup)
    var index: Int32 = 0
    while index < screenNumber, iterator.rem > 0 {
      xcb_screen_next(&iterator)
      index += 1
    }
    guard iterator.rem > 0, let screen = iterator.data?.pointee else {
      xcb_disconnect(connection)
      throw .connectionFailed(display: name, code: 6)
    }
    let depth = Int(screen.root_depth)
    var bitsPerPixel = 0
    if let formats = xcb_setup_pixmap_formats(setup) {
      for i in 0..<Int(xcb_setup_pixmap_formats_length(setup)) where Int(formats[i].depth) == depth
      {
        bitsPerPixel = Int(formats[i].bits_per_pixel)
      }
    }
    guard bitsPerPixel == 32, depth == 24 || depth == 32 else {
      xcb_disconnect(connection)
      throw .unsupportedPixelFormat(depth: depth, bitsPerPixel: bitsPerPixel)
    }
    self.connection = connection
    root = screen.root
    width = Int(screen.width_in_pixels)
    height = Int(screen.height_in_pixels)
    byteOrderMSBFirst = setup.pointee.image_byte_order == UInt8(XCB_IMAGE_ORDER_MSB_FIRST.rawValue)
    if useSharedMemory { attachSharedMemory() }
  }

  deinit {
    detachSharedMemory()
    xcb_disconnect(connection)
  }

  /// Creates a SysV segment the size of the screen and attaches it to the server; on any failure
  /// (no MIT-SHM, server on another host or IPC namespace) capture uses plain GetImage.
  private func attachSharedMemory() {
    guard wcs_xcb_shm_present(connection) != 0 else { return }
    let size = width * height * 4
    let id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0o600)
    guard id >= 0 else { return }
    let address = shmat(id, nil, 0)
    // The segment is removed once both sides detach.
    defer { shmctl(id, IPC_RMID, nil) }
    guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else { return }
    let segment = xcb_generate_id(connection)
    let cookie = xcb_shm_attach_checked(connection, segment, UInt32(id), 0)
    if let error = xcb_request_check(connection, cookie) {
      free(error)
      shmdt(address)
      return
    }
    shmSegment = segment
    shmAddress = address
  }

  private func detachSharedMemory() {
    guard let address = shmAddress else { return }
    xcb_shm_detach(connection, shmSegment)
    xcb_flush(connection)
    shmdt(address)
    shmAddress = nil
  }

  /// The root window's pixels in libyuv "ARGB" memory order (B, G, R, X), `4 * width` per row.
  func grab() throws(X11CaptureError) -> [UInt8] {
    var pixels: [UInt8]
    if let address = shmAddress {
      let cookie = xcb_shm_get_image(
        connection, root, 0, 0, UInt16(width), UInt16(height), UInt32.max,
        UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), shmSegment, 0)
      var error: UnsafeMutablePointer<xcb_generic_error_t>?
      guard let reply = xcb_shm_get_image_reply(connection, cookie, &error) else {
        let code = error?.pointee.error_code ?? 0
        free(error)
        throw .captureFailed(reason: "ShmGetImage: X error \(code)")
      }
      free(reply)
      pixels = [UInt8](UnsafeRawBufferPointer(start: address, count: width * height * 4))
    } else {
      let cookie = xcb_get_image(
        connection, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), root, 0, 0, UInt16(width),
        UInt16(height), UInt32.max)
      var error: UnsafeMutablePointer<xcb_generic_error_t>?
      guard let reply = xcb_get_image_reply(connection, cookie, &error) else {
        let code = error?.pointee.error_code ?? 0
        free(error)
        throw .captureFailed(reason: "GetImage: X error \(code)")
      }
      defer { free(reply) }
      let length = Int(xcb_get_image_data_length(reply))
      guard length >= width * height * 4, let data = xcb_get_image_data(reply) else {
        throw .captureFailed(reason: "GetImage returned \(length) bytes for \(width)x\(height)")
      }
      pixels = [UInt8](UnsafeBufferPointer(start: data, count: width * height * 4))
    }
    if byteOrderMSBFirst {
      // X, R, G, B in memory: reverse each pixel into B, G, R, X.
      var i = 0
      while i + 3 < pixels.count {
        pixels.swapAt(i, i + 3)
        pixels.swapAt(i + 1, i + 2)
        i += 4
      }
    }
    return pixels
  }
}

private func getenvString(_ name: String) -> String? {
  guard let value = getenv(name) else { return nil }
  return String(cString: value)
}
