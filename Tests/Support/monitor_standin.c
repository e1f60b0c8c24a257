// A stand-in for the kernel's Bluetooth monitor socket, loaded with LD_PRELOAD by the tests
// (our machines' kernels have no Bluetooth). socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)
// returns one end of an AF_UNIX SOCK_SEQPACKET pair; a thread writes monitor messages (6-byte
// little-endian header + payload, one per datagram) into the other end, made from the records
// of a btsnoop file, then closes it (the reader sees the end). bind() on that socket succeeds.
//
// Environment:
//   STANDIN_CAPTURE  btsnoop file (datalink 1002 H4, or 2001 monitor) to replay
//   STANDIN_RATE     messages per second (0 or unset: as fast as the reader takes them)
//   STANDIN_ERRNO    make socket() fail with this errno instead (e.g. 97 EAFNOSUPPORT, 1 EPERM)
//   STANDIN_BIND_ERRNO  make bind() fail with this errno
//   STANDIN_HOLD_MS  keep the socket open this long after the last message (default 0)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fake_fd = -1;

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void pause_for(double rate) {
  if (rate <= 0) return;
  struct timespec ts;
  double seconds = 1.0 / rate;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static void *feed(void *arg) {
  int out = (int)(intptr_t)arg;
  const char *path = getenv("STANDIN_CAPTURE");
  double rate = getenv("STANDIN_RATE") ? atof(getenv("STANDIN_RATE")) : 0;
  FILE *file = path ? fopen(path, "rb") : NULL;
  unsigned char header[24];
  static unsigned char message[6 + 65536];
  if (file && fread(header, 1, 16, file) == 16) {
    uint32_t datalink = be32(header + 12);
    while (fread(header, 1, 24, file) == 24) {
      uint32_t length = be32(header + 4), flags = be32(header + 8);
      if (length > 65535 + 1) break;
      unsigned char *data = message + 6;
      if (fread(data, 1, length, file) != length) break;
      uint16_t opcode, index = 0;
      size_t size = length;
      if (datalink == 2001) {
        opcode = flags & 0xFFFF;
        index = flags >> 16;
      } else {
        // H4: the indicator byte says the kind; flags bit 0 the direction.
        unsigned char indicator = length > 0 ? data[0] : 0;
        int received = flags & 1;
        switch (indicator) {
        case 1: opcode = 2; break;                    // command
        case 4: opcode = 3; break;                    // event
        case 2: opcode = received ? 5 : 4; break;     // ACL
        case 3: opcode = received ? 7 : 6; break;     // SCO
        case 5: opcode = received ? 19 : 18; break;   // ISO
        default: continue;
        }
        memmove(data, data + 1, length - 1);
        size = length - 1;
      }
      message[0] = opcode & 0xFF; message[1] = opcode >> 8;
      message[2] = index & 0xFF; message[3] = index >> 8;
      message[4] = size & 0xFF; message[5] = (size >> 8) & 0xFF;
      if (send(out, message, 6 + size, 0) < 0) break;
      pause_for(rate);
    }
  }
  if (file) fclose(file);
  if (getenv("STANDIN_HOLD_MS")) usleep((useconds_t)atoi(getenv("STANDIN_HOLD_MS")) * 1000);
  close(out);
  return NULL;
}

int socket(int domain, int type, int protocol) {
  static int (*real_socket)(int, int, int);
  if (!real_socket) real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
  if (domain != 31 || protocol != 1) return real_socket(domain, type, protocol);
  if (getenv("STANDIN_ERRNO")) {
    errno = atoi(getenv("STANDIN_ERRNO"));
    return -1;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  // Room for bursts: the reader may be slower than the feeder for a while.
  int size = 4 << 20;
  setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  fake_fd = pair[0];
  pthread_t thread;
  pthread_create(&thread, NULL, feed, (void *)(intptr_t)pair[1]);
  pthread_detach(thread);
  return pair[0];
}

int bind(int fd, const struct sockaddr *address, socklen_t length) {
  static int (*real_bind)(int, const struct sockaddr *, socklen_t);
  if (!real_bind) real_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
  if (fd != fake_fd || fd < 0) return real_bind(fd, address, length);
  if (getenv("STANDIN_BIND_ERRNO")) {
    errno = atoi(getenv("STANDIN_BIND_ERRNO"));
    return -1;
  }
  return 0;
}
