// A small C face of libre's SIP stack (sip, sipsess, sipreg, sipevent) for the local server's
// WebRTC–SIP gateway. libre runs on one thread of its own (re_main); every function here may be
// called from any thread: it queues a command for that thread (creation and destruction wait
// for it). Events arrive on the libre thread through the user agent's handler; their strings
// live only for the duration of the call.
#ifndef SIPGW_H
#define SIPGW_H

#include <stdint.h>

enum sipgw_event_kind {
  /// A provisional response (1xx) to our INVITE: code, reason, sdp (early media) or NULL.
  SIPGW_EVENT_PROGRESS = 1,
  /// The INVITE got 200 (outgoing) or our 200 got its ACK (incoming): sdp = remote SDP.
  SIPGW_EVENT_ESTABLISHED = 2,
  /// The session ended: code = final status of a failed INVITE, or 0 for a BYE / a local
  /// error (reason says which).
  SIPGW_EVENT_CLOSED = 3,
  /// A new INVITE: from, from_name, to, sdp (NULL without an offer). Answer or hang up.
  SIPGW_EVENT_INCOMING = 4,
  /// A REGISTER transaction ended: code (200 = registered), reason.
  SIPGW_EVENT_REGISTER = 5,
  /// The far end changed the session (re-INVITE/UPDATE): sdp = its new offer.
  SIPGW_EVENT_MODIFIED = 6,
  /// Our REFER progressed: code = 202 for accepted, then the NOTIFY sipfrag's status code.
  SIPGW_EVENT_REFER = 7,
  /// An INFO arrived in the session: sdp = its body (e.g. application/dtmf-relay).
  SIPGW_EVENT_INFO = 8,
};

struct sipgw_event {
  int kind;
  uint32_t call;
  uint16_t code;
  const char *reason;
  const char *sdp;
  const char *from;
  const char *from_name;
  const char *to;
};

typedef void (*sipgw_event_h)(const struct sipgw_event *event, void *arg);

struct sipgw_ua;

/// Creates a user agent listening on UDP ip:port (port 0 = any); `*bound_port` gets the port.
/// Returns 0 or an errno value. Starts libre's thread on first use.
int sipgw_ua_create(struct sipgw_ua **uap, const char *ip, uint16_t port, const char *user,
                    sipgw_event_h handler, void *arg, uint16_t *bound_port);
/// Ends every call (BYE/CANCEL), unregisters, closes the sockets; no event follows. Waits.
void sipgw_ua_destroy(struct sipgw_ua *ua);

/// Digest credentials for every challenge (REGISTER, INVITE, REFER).
int sipgw_set_auth(struct sipgw_ua *ua, const char *user, const char *password);
/// REGISTER `aor` (sip:user@domain) at `registrar` (sip:host:port), refreshed every
/// `expires` seconds; 0 unregisters.
int sipgw_register(struct sipgw_ua *ua, const char *registrar, const char *aor,
                   const char *display, uint32_t expires);
/// INVITE `to_uri` with our SDP offer; `headers` ("Name: value\r\n"...) may be NULL. The call
/// id is the caller's, below 0x80000000 (incoming calls get ids from 0x80000000 up).
int sipgw_invite(struct sipgw_ua *ua, uint32_t call, const char *to_uri, const char *from_uri,
                 const char *from_name, const char *sdp, const char *headers);
/// 200 OK to an incoming call with our SDP answer.
int sipgw_answer(struct sipgw_ua *ua, uint32_t call, const char *sdp);
/// Ends a call: CANCEL before the answer, BYE after, or (incoming, unanswered) a final
/// response `code` (e.g. 486, 603).
int sipgw_hangup(struct sipgw_ua *ua, uint32_t call, uint16_t code, const char *reason);
/// re-INVITE with a new offer (hold: a=sendonly, unhold: a=sendrecv).
int sipgw_modify(struct sipgw_ua *ua, uint32_t call, const char *sdp);
/// INFO with `ctype` and `body` (SIP INFO DTMF: application/dtmf-relay).
int sipgw_info(struct sipgw_ua *ua, uint32_t call, const char *ctype, const char *body);
/// REFER to `target` (a SIP URI); progress comes as SIPGW_EVENT_REFER.
int sipgw_refer(struct sipgw_ua *ua, uint32_t call, const char *target);

#endif
