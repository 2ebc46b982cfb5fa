import CYUV

/// Scaling and pixel format conversion through libyuv.
extension I420Image {
  /// The picture resized to `width` x `height` with libyuv's box filter (`I420Scale`,
  /// `kFilterBox`): each output sample is the mean of the source area it covers.
  /// - Returns: nil when a target dimension is not positive or libyuv fails.
  public func scaled(toWidth targetWidth: Int, height targetHeight: Int) -> I420Image? {
    guard targetWidth > 0, targetHeight > 0, targetWidth <= 16384, targetHeight <= 16384 else {
      return nil
    }
    if targetWidth == width, targetHeight == height { return self }
    var out = I420Image(width: targetWidth, height: targetHeight)
    let outStrideY = out.strideY
    let outStrideU = out.strideU
    let outStrideV = out.strideV
    let result = y.withUnsafeBufferPointer { sy in
      u.withUnsafeBufferPointer { su in
        v.withUnsafeBufferPointer { sv in
          out.y.withUnsafeMutableBufferPointer { dy in
            out.u.withUnsafeMutableBufferPointer { du in
              out.v.withUnsafeMutableBufferPointer { dv in
                I420Scale(
                  sy.baseAddress, Int32(strideY), su.baseAddress, Int32(strideU), sv.baseAddress,
                  Int32(strideV), Int32(width), Int32(height),
                  dy.baseAddress, Int32(outStrideY), du.baseAddress, Int32(outStrideU),
                  dv.baseAddress, Int32(outStrideV), Int32(targetWidth), Int32(targetHeight),
                  kFilterBox)
              }
            }
          }
        }
      }
    }
    return result == 0 ? out : nil
  }

  /// A picture from 32-bit pixels in libyuv "ARGB" order, which in memory is B, G, R, A per pixel
  /// (little-endian 0xAARRGGBB words, the layout of most screen grabs), converted with BT.601
  /// limited-range coefficients (`ARGBToI420`).
  /// - Parameters:
  ///   - width: picture width in pixels (> 0).
  ///   - height: picture height in pixels (> 0).
  ///   - bgra: at least `stride * height` bytes.
  ///   - stride: bytes per row, >= `4 * width`; 0 means `4 * width`.
  /// - Returns: nil when the sizes do not fit the buffer or libyuv fails.
  public static func fromARGB(_ bgra: [UInt8], width: Int, height: Int, stride: Int = 0)
    -> I420Image?
  {
    let rowBytes = stride == 0 ? 4 * width : stride
    guard width > 0, height > 0, rowBytes >= 4 * width, bgra.count >= rowBytes * height else {
      return nil
    }
    var out = I420Image(width: width, height: height)
    let (sy, su, sv) = (out.strideY, out.strideU, out.strideV)
    let result = bgra.withUnsafeBufferPointer { source in
      out.y.withUnsafeMutableBufferPointer { dy in
        out.u.withUnsafeMutableBufferPointer { du in
          out.v.withUnsafeMutableBufferPointer { dv in
            ARGBToI420(
              source.baseAddress, Int32(rowBytes), dy.baseAddress, Int32(sy), du.baseAddress,
              Int32(su), dv.baseAddress, Int32(sv), Int32(width), Int32(height))
          }
        }
      }
    }
    return result == 0 ? out : nil
  }

  /// A picture from packed YUY2 (Y0 U Y1 V per two pixels, the usual V4L2 webcam format),
  /// converted with `YUY2ToI420`.
  /// - Parameters:
  ///   - width: picture width in pixels (> 0).
  ///   - height: picture height in pixels (> 0).
  ///   - yuy2: at least `stride * height` bytes.
  ///   - stride: bytes per row, >= `2 * width`; 0 means `2 * ((width + 1) / 2) * 2`.
  /// - Returns: nil when the sizes do not fit the buffer or libyuv fails.
  public static func fromYUY2(_ yuy2: [UInt8], width: Int, height: Int, stride: Int = 0)
    -> I420Image?
  {
    let rowBytes = stride == 0 ? ((width + 1) / 2) * 4 : stride
    guard width > 0, height > 0, rowBytes >= 2 * width, yuy2.count >= rowBytes * height else {
      return nil
    }
    var out = I420Image(width: width, height: height)
    let (sy, su, sv) = (out.strideY, out.strideU, out.strideV)
    let result = yuy2.withUnsafeBufferPointer { source in
      out.y.withUnsafeMutableBufferPointer { dy in
        out.u.withUnsafeMutableBufferPointer { du in
          out.v.withUnsafeMutableBufferPointer { dv in
            YUY2ToI420(
              source.baseAddress, Int32(rowBytes), dy.baseAddress, Int32(sy), du.baseAddress,
              Int32(su), dv.baseAddress, Int32(sv), Int32(width), Int32(height))
          }
        }
      }
    }
    return result == 0 ? out : nil
  }

  /// The picture as 32-bit pixels in libyuv "ARGB" order (B, G, R, A in memory), `4 * width` bytes
  /// per row, BT.601 limited range (`I420ToARGB`).
  /// - Returns: nil when libyuv fails.
  public func argb() -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: 4 * width * height)
    let result = y.withUnsafeBufferPointer { sy in
      u.withUnsafeBufferPointer { su in
        v.withUnsafeBufferPointer { sv in
          out.withUnsafeMutableBufferPointer { d in
            I420ToARGB(
              sy.baseAddress, Int32(strideY), su.baseAddress, Int32(strideU), sv.baseAddress,
              Int32(strideV), d.baseAddress, Int32(4 * width), Int32(width), Int32(height))
          }
        }
      }
    }
    return result == 0 ? out : nil
  }
}
