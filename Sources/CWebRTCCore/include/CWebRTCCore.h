// CWebRTCCore: the umbrella over the library shims (OpenSSL + libsrtp2, libwebsockets, libopus,
// libvpx, libyuv, usrsctp, the UDP receive shim), for the binding tests and the benchmarks.
// The Swift targets import the shims they need instead.
#ifndef CWEBRTCCORE_H
#define CWEBRTCCORE_H

#include <COpenSSL.h>
#include <CWebSockets.h>
#include <COpus.h>
#include <CVPX.h>
#include <CYUV.h>
#include <CUsrsctp.h>
#include <CSockets.h>

#endif
