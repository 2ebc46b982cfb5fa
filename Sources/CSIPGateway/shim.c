// libre (Debian libre-dev) behind the small API of sipgw.h. Everything that touches libre runs
// on one thread (re_main); the public functions queue commands for it through an mqueue.
#include "sipgw.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <re/re.h>

struct gcall {
  struct le le;
  struct sipgw_ua *ua;
  uint32_t id;
  struct sipsess *sess;
  struct sipsub *sub;
  char *remote_sdp;
  char *local_sdp;
  bool incoming;
  bool answered;
};

struct sipgw_ua {
  struct sip *sip;
  struct sipsess_sock *sock;
  struct sipevent_sock *evsock;
  struct sipreg *reg;
  struct list calls;
  char *user;
  char *auth_user;
  char *auth_password;
  sipgw_event_h handler;
  void *arg;
  uint32_t next_incoming;
  /// Credentials asked for since the last REGISTER answered 200: a registrar that challenges
  /// every try (a wrong password, each challenge with a fresh nonce) is given up on.
  unsigned reg_auth_tries;
};

enum op {
  OP_CREATE, OP_DESTROY, OP_AUTH, OP_REGISTER, OP_INVITE, OP_ANSWER, OP_HANGUP, OP_MODIFY,
  OP_INFO, OP_REFER,
};

struct cmd {
  enum op op;
  struct sipgw_ua *ua;
  uint32_t call;
  uint16_t code;
  uint32_t number;
  char *s[5];
  sem_t *done;
  int *result;
  struct sipgw_ua **created;
  uint16_t *bound_port;
  sipgw_event_h handler;
  void *arg;
};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static struct mqueue *queue;
static sem_t started;
static int start_error;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static char *body_of(const struct sip_msg *msg) {
  if (!msg || !msg->mb) return NULL;
  size_t n = mbuf_get_left(msg->mb);
  if (n == 0) return NULL;
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, mbuf_buf(msg->mb), n);
  s[n] = 0;
  return s;
}

static char *pl_text(const struct pl *pl) {
  if (!pl || !pl->p) return strdup("");
  char *s = malloc(pl->l + 1);
  if (!s) return NULL;
  memcpy(s, pl->p, pl->l);
  s[pl->l] = 0;
  return s;
}

static void emit(struct sipgw_ua *ua, struct sipgw_event *event) {
  if (ua->handler) ua->handler(event, ua->arg);
}

static struct gcall *find_call(struct sipgw_ua *ua, uint32_t id) {
  for (struct le *le = ua->calls.head; le; le = le->next) {
    struct gcall *call = le->data;
    if (call->id == id) return call;
  }
  return NULL;
}

static void free_call(struct gcall *call) {
  list_unlink(&call->le);
  call->sub = mem_deref(call->sub);
  call->sess = mem_deref(call->sess);
  free(call->remote_sdp);
  free(call->local_sdp);
  free(call);
}

static struct mbuf *mbuf_of(const char *text) {
  struct mbuf *mb = mbuf_alloc(strlen(text) + 1);
  if (!mb) return NULL;
  mbuf_write_str(mb, text);
  mb->pos = 0;
  return mb;
}

// MARK: libre handlers

static int auth_handler(char **user, char **password, const char *realm, void *arg) {
  struct sipgw_ua *ua = arg;
  (void)realm;
  if (!ua->auth_user || !ua->auth_password) return EAUTH;
  int err = str_dup(user, ua->auth_user);
  return err ? err : str_dup(password, ua->auth_password);
}

static int offer_handler(struct mbuf **descp, const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  char *sdp = body_of(msg);
  struct sipgw_event event = {.kind = SIPGW_EVENT_MODIFIED, .call = call->id, .sdp = sdp};
  emit(call->ua, &event);
  free(sdp);
  *descp = call->local_sdp ? mbuf_of(call->local_sdp) : NULL;
  return 0;
}

static int answer_handler(const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  if (!call->answered) {
    free(call->remote_sdp);
    call->remote_sdp = body_of(msg);
  }
  return 0;
}

static void progress_handler(const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  char *reason = pl_text(&msg->reason);
  char *sdp = body_of(msg);
  struct sipgw_event event = {
      .kind = SIPGW_EVENT_PROGRESS, .call = call->id, .code = msg->scode, .reason = reason,
      .sdp = sdp};
  emit(call->ua, &event);
  free(reason);
  free(sdp);
}

static void established_handler(const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  (void)msg;
  call->answered = true;
  struct sipgw_event event = {
      .kind = SIPGW_EVENT_ESTABLISHED, .call = call->id, .code = 200,
      .sdp = call->incoming ? NULL : call->remote_sdp};
  emit(call->ua, &event);
}

static void info_handler(struct sip *sip, const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  (void)sip_reply(sip, msg, 200, "OK");
  char *body = body_of(msg);
  struct sipgw_event event = {.kind = SIPGW_EVENT_INFO, .call = call->id, .sdp = body};
  emit(call->ua, &event);
  free(body);
}

static void refer_handler(struct sip *sip, const struct sip_msg *msg, void *arg) {
  (void)arg;
  (void)sip_reply(sip, msg, 603, "Decline");
}

static void close_handler(int err, const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  struct sipgw_ua *ua = call->ua;
  char *reason = NULL;
  uint16_t code = 0;
  if (msg && msg->scode >= 300) {
    code = msg->scode;
    reason = pl_text(&msg->reason);
  } else if (err == ECONNRESET || err == 0) {
    reason = strdup("BYE");
  } else {
    reason = strdup(strerror(err));
  }
  struct sipgw_event event = {
      .kind = SIPGW_EVENT_CLOSED, .call = call->id, .code = code, .reason = reason};
  free_call(call);
  emit(ua, &event);
  free(reason);
}

static void connect_handler(const struct sip_msg *msg, void *arg) {
  struct sipgw_ua *ua = arg;
  struct gcall *call = calloc(1, sizeof(*call));
  if (!call) {
    (void)sip_treply(NULL, ua->sip, msg, 500, "Server Internal Error");
    return;
  }
  call->ua = ua;
  call->incoming = true;
  call->id = 0x80000000u | (ua->next_incoming++ & 0x7fffffffu);
  int err = sipsess_accept(
      &call->sess, ua->sock, msg, 180, "Ringing", ua->user, "application/sdp", NULL,
      auth_handler, ua, false, offer_handler, answer_handler, established_handler, info_handler,
      refer_handler, close_handler, call, "Allow: INVITE, ACK, BYE, CANCEL, INFO, REFER, NOTIFY\r\n");
  if (err) {
    free(call);
    (void)sip_treply(NULL, ua->sip, msg, 500, "Server Internal Error");
    return;
  }
  list_append(&ua->calls, &call->le, call);
  char *from = pl_text(&msg->from.auri);
  char *name = pl_text(&msg->from.dname);
  char *to = pl_text(&msg->to.auri);
  char *sdp = body_of(msg);
  call->remote_sdp = sdp ? strdup(sdp) : NULL;
  struct sipgw_event event = {
      .kind = SIPGW_EVENT_INCOMING, .call = call->id, .from = from, .from_name = name, .to = to,
      .sdp = sdp};
  emit(ua, &event);
  free(from);
  free(name);
  free(to);
  free(sdp);
}

/// REGISTER's credentials: refused after `MAX_REG_AUTH_TRIES` challenges without a 200, so
/// libre reports the 401/407 instead of answering challenges for ever.
enum { MAX_REG_AUTH_TRIES = 3 };

static int reg_auth_handler(char **user, char **password, const char *realm, void *arg) {
  struct sipgw_ua *ua = arg;
  if (++ua->reg_auth_tries > MAX_REG_AUTH_TRIES) return EAUTH;
  return auth_handler(user, password, realm, arg);
}

static void register_handler(int err, const struct sip_msg *msg, void *arg) {
  struct sipgw_ua *ua = arg;
  if (msg && msg->scode < 300) ua->reg_auth_tries = 0;
  char *reason = msg ? pl_text(&msg->reason) : strdup(strerror(err));
  struct sipgw_event event = {
      .kind = SIPGW_EVENT_REGISTER, .code = msg ? msg->scode : 0, .reason = reason};
  emit(ua, &event);
  free(reason);
}

static void notify_handler(struct sip *sip, const struct sip_msg *msg, void *arg) {
  struct gcall *call = arg;
  (void)sip_treply(NULL, sip, msg, 200, "OK");
  char *body = body_of(msg);
  uint16_t code = 0;
  if (body && strncmp(body, "SIP/2.0 ", 8) == 0) code = (uint16_t)atoi(body + 8);
  struct sipgw_event event = {.kind = SIPGW_EVENT_REFER, .call = call->id, .code = code};
  emit(call->ua, &event);
  free(body);
}

static void subscription_closed(
    int err, const struct sip_msg *msg, const struct sipevent_substate *substate, void *arg) {
  struct gcall *call = arg;
  (void)substate;
  call->sub = mem_deref(call->sub);
  if (err || (msg && msg->scode >= 300)) {
    struct sipgw_event event = {
        .kind = SIPGW_EVENT_REFER, .call = call->id, .code = msg ? msg->scode : 500};
    emit(call->ua, &event);
  }
}

static void info_response(int err, const struct sip_msg *msg, void *arg) {
  (void)err;
  (void)msg;
  (void)arg;
}

// SIPGW_TRACE=1 in the environment prints every SIP message sent and received (debugging).
static void trace_handler(bool tx, enum sip_transp tp, const struct sa *src, const struct sa *dst,
                          const uint8_t *pkt, size_t len, void *arg) {
  (void)tp;
  (void)arg;
  re_fprintf(stderr, "sipgw %s %J -> %J\n%b\n", tx ? "send" : "recv", src, dst, pkt, len);
}

// MARK: commands (libre thread)

static int do_create(struct cmd *cmd) {
  struct sipgw_ua *ua = calloc(1, sizeof(*ua));
  if (!ua) return ENOMEM;
  ua->handler = cmd->handler;
  ua->arg = cmd->arg;
  ua->user = strdup(cmd->s[1] ? cmd->s[1] : "wcs");
  struct sa laddr;
  int err = sa_set_str(&laddr, cmd->s[0], cmd->code);
  if (!err) err = sip_alloc(&ua->sip, NULL, 32, 32, 32, "WCSLocalServer SIP gateway", NULL, NULL);
  if (!err) err = sip_transp_add(ua->sip, SIP_TRANSP_UDP, &laddr);
  if (!err && getenv("SIPGW_TRACE")) sip_set_trace_handler(ua->sip, trace_handler);
  if (!err) err = sipsess_listen(&ua->sock, ua->sip, 32, connect_handler, ua);
  if (!err) err = sipevent_listen(&ua->evsock, ua->sip, 32, 32, NULL, NULL);
  if (!err) {
    struct sa bound;
    err = sip_transp_laddr(ua->sip, &bound, SIP_TRANSP_UDP, &laddr);
    if (!err && cmd->bound_port) *cmd->bound_port = sa_port(&bound);
  }
  if (err) {
    ua->evsock = mem_deref(ua->evsock);
    ua->sock = mem_deref(ua->sock);
    if (ua->sip) sip_close(ua->sip, true);
    ua->sip = mem_deref(ua->sip);
    free(ua->user);
    free(ua);
    return err;
  }
  *cmd->created = ua;
  return 0;
}

static void do_destroy(struct sipgw_ua *ua) {
  ua->handler = NULL;
  while (ua->calls.head) free_call(ua->calls.head->data);
  ua->reg = mem_deref(ua->reg);
  ua->evsock = mem_deref(ua->evsock);
  ua->sock = mem_deref(ua->sock);
  sip_close(ua->sip, true);
  ua->sip = mem_deref(ua->sip);
  free(ua->user);
  free(ua->auth_user);
  free(ua->auth_password);
  free(ua);
}

static int do_invite(struct cmd *cmd) {
  struct sipgw_ua *ua = cmd->ua;
  if (find_call(ua, cmd->call)) return EALREADY;
  struct gcall *call = calloc(1, sizeof(*call));
  if (!call) return ENOMEM;
  call->ua = ua;
  call->id = cmd->call;
  call->local_sdp = dup_or_null(cmd->s[3]);
  struct mbuf *mb = mbuf_of(cmd->s[3] ? cmd->s[3] : "");
  int err = mb ? 0 : ENOMEM;
  if (!err)
    err = sipsess_connect(
        &call->sess, ua->sock, cmd->s[0], cmd->s[2], cmd->s[1], ua->user, NULL, 0,
        "application/sdp", mb, auth_handler, ua, false, offer_handler, answer_handler,
        progress_handler, established_handler, info_handler, refer_handler, close_handler, call,
        "%s", cmd->s[4] ? cmd->s[4] : "");
  mem_deref(mb);
  if (err) {
    free(call->local_sdp);
    free(call);
    return err;
  }
  list_append(&ua->calls, &call->le, call);
  return 0;
}

static int do_command(struct cmd *cmd) {
  struct sipgw_ua *ua = cmd->ua;
  struct gcall *call = NULL;
  switch (cmd->op) {
    case OP_CREATE: return do_create(cmd);
    case OP_DESTROY: do_destroy(ua); return 0;
    case OP_AUTH:
      free(ua->auth_user);
      free(ua->auth_password);
      ua->auth_user = dup_or_null(cmd->s[0]);
      ua->auth_password = dup_or_null(cmd->s[1]);
      return 0;
    case OP_REGISTER:
      ua->reg = mem_deref(ua->reg);
      ua->reg_auth_tries = 0;
      if (cmd->number == 0) return 0;
      return sipreg_register(
          &ua->reg, ua->sip, cmd->s[0], cmd->s[1], cmd->s[2], cmd->s[1], cmd->number, ua->user,
          NULL, 0, 0, reg_auth_handler, ua, false, register_handler, ua, NULL, "");
    case OP_INVITE: return do_invite(cmd);
    default: break;
  }
  call = find_call(ua, cmd->call);
  if (!call) return ENOENT;
  switch (cmd->op) {
    case OP_ANSWER: {
      free(call->local_sdp);
      call->local_sdp = dup_or_null(cmd->s[0]);
      struct mbuf *mb = mbuf_of(cmd->s[0] ? cmd->s[0] : "");
      int err = sipsess_answer(call->sess, 200, "OK", mb, "");
      mem_deref(mb);
      return err;
    }
    case OP_HANGUP:
      if (call->incoming && !call->answered && cmd->code >= 300)
        (void)sipsess_reject(call->sess, cmd->code, cmd->s[0] ? cmd->s[0] : "Busy Here", "");
      free_call(call);
      return 0;
    case OP_MODIFY: {
      free(call->local_sdp);
      call->local_sdp = dup_or_null(cmd->s[0]);
      struct mbuf *mb = mbuf_of(cmd->s[0] ? cmd->s[0] : "");
      int err = sipsess_modify(call->sess, mb);
      mem_deref(mb);
      return err;
    }
    case OP_INFO: {
      struct mbuf *mb = mbuf_of(cmd->s[1] ? cmd->s[1] : "");
      int err = sipsess_info(call->sess, cmd->s[0], mb, info_response, call);
      mem_deref(mb);
      return err;
    }
    case OP_REFER:
      call->sub = mem_deref(call->sub);
      return sipevent_drefer(
          &call->sub, ua->evsock, sipsess_dialog(call->sess), ua->user, auth_handler, ua, false,
          notify_handler, subscription_closed, call, "Refer-To: %s\r\n", cmd->s[0]);
    default: return EINVAL;
  }
}

static void queue_handler(int id, void *data, void *arg) {
  (void)id;
  (void)arg;
  struct cmd *cmd = data;
  int result = do_command(cmd);
  for (int i = 0; i < 5; i++) free(cmd->s[i]);
  if (cmd->done) {
    *cmd->result = result;
    sem_post(cmd->done);
  }
  free(cmd);
}

static void *re_thread(void *arg) {
  (void)arg;
  start_error = libre_init();
  if (!start_error) start_error = mqueue_alloc(&queue, queue_handler, NULL);
  sem_post(&started);
  if (start_error) return NULL;
  (void)re_main(NULL);
  return NULL;
}

static void start(void) {
  sem_init(&started, 0, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, re_thread, NULL) != 0) {
    start_error = EAGAIN;
    return;
  }
  pthread_detach(thread);
  sem_wait(&started);
}

/// Queues `cmd` (taking it); with `wait`, blocks until it ran and returns its result.
static int submit(struct cmd *cmd, bool wait) {
  pthread_once(&start_once, start);
  if (start_error) {
    for (int i = 0; i < 5; i++) free(cmd->s[i]);
    free(cmd);
    return start_error;
  }
  sem_t done;
  int result = 0;
  if (wait) {
    sem_init(&done, 0, 0);
    cmd->done = &done;
    cmd->result = &result;
  }
  int err = mqueue_push(queue, 0, cmd);
  if (err) {
    for (int i = 0; i < 5; i++) free(cmd->s[i]);
    free(cmd);
    return err;
  }
  if (wait) {
    sem_wait(&done);
    sem_destroy(&done);
  }
  return result;
}

static struct cmd *new_cmd(enum op op, struct sipgw_ua *ua, uint32_t call) {
  struct cmd *cmd = calloc(1, sizeof(*cmd));
  if (!cmd) return NULL;
  cmd->op = op;
  cmd->ua = ua;
  cmd->call = call;
  return cmd;
}

// MARK: public API

int sipgw_ua_create(struct sipgw_ua **uap, const char *ip, uint16_t port, const char *user,
                    sipgw_event_h handler, void *arg, uint16_t *bound_port) {
  if (!uap || !ip) return EINVAL;
  struct cmd *cmd = new_cmd(OP_CREATE, NULL, 0);
  if (!cmd) return ENOMEM;
  cmd->s[0] = strdup(ip);
  cmd->s[1] = dup_or_null(user);
  cmd->code = port;
  cmd->handler = handler;
  cmd->arg = arg;
  cmd->created = uap;
  cmd->bound_port = bound_port;
  return submit(cmd, true);
}

void sipgw_ua_destroy(struct sipgw_ua *ua) {
  if (!ua) return;
  struct cmd *cmd = new_cmd(OP_DESTROY, ua, 0);
  if (cmd) (void)submit(cmd, true);
}

int sipgw_set_auth(struct sipgw_ua *ua, const char *user, const char *password) {
  struct cmd *cmd = new_cmd(OP_AUTH, ua, 0);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(user);
  cmd->s[1] = dup_or_null(password);
  return submit(cmd, true);
}

int sipgw_register(struct sipgw_ua *ua, const char *registrar, const char *aor,
                   const char *display, uint32_t expires) {
  struct cmd *cmd = new_cmd(OP_REGISTER, ua, 0);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(registrar);
  cmd->s[1] = dup_or_null(aor);
  cmd->s[2] = dup_or_null(display);
  cmd->number = expires;
  return submit(cmd, true);
}

int sipgw_invite(struct sipgw_ua *ua, uint32_t call, const char *to_uri, const char *from_uri,
                 const char *from_name, const char *sdp, const char *headers) {
  if (call & 0x80000000u) return EINVAL;
  struct cmd *cmd = new_cmd(OP_INVITE, ua, call);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(to_uri);
  cmd->s[1] = dup_or_null(from_uri);
  cmd->s[2] = dup_or_null(from_name);
  cmd->s[3] = dup_or_null(sdp);
  cmd->s[4] = dup_or_null(headers);
  return submit(cmd, true);
}

int sipgw_answer(struct sipgw_ua *ua, uint32_t call, const char *sdp) {
  struct cmd *cmd = new_cmd(OP_ANSWER, ua, call);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(sdp);
  return submit(cmd, true);
}

int sipgw_hangup(struct sipgw_ua *ua, uint32_t call, uint16_t code, const char *reason) {
  struct cmd *cmd = new_cmd(OP_HANGUP, ua, call);
  if (!cmd) return ENOMEM;
  cmd->code = code;
  cmd->s[0] = dup_or_null(reason);
  return submit(cmd, true);
}

int sipgw_modify(struct sipgw_ua *ua, uint32_t call, const char *sdp) {
  struct cmd *cmd = new_cmd(OP_MODIFY, ua, call);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(sdp);
  return submit(cmd, true);
}

int sipgw_info(struct sipgw_ua *ua, uint32_t call, const char *ctype, const char *body) {
  struct cmd *cmd = new_cmd(OP_INFO, ua, call);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(ctype);
  cmd->s[1] = dup_or_null(body);
  return submit(cmd, true);
}

int sipgw_refer(struct sipgw_ua *ua, uint32_t call, const char *target) {
  struct cmd *cmd = new_cmd(OP_REFER, ua, call);
  if (!cmd) return ENOMEM;
  cmd->s[0] = dup_or_null(target);
  return submit(cmd, true);
}
