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
//   STANDIN_REPEAT   replay the capture this many times (default 1)
//   STANDIN_DROP     1: never wait for the reader: a message that does not fit is dropped and
//                    counted, as the kernel's monitor queue does, and reported as the kernel
//                    does, through getsockopt(SO_MEMINFO) (default: wait)
//   STANDIN_REPORT   file to write "sent N dropped M seconds S cpu C" to at the end (C: this
//                    feeding thread's own CPU seconds, which a real kernel would not charge)
//   STANDIN_ADAPTERS comma-separated controller indexes announced first, as the kernel does when
//                    the socket binds: NEW_INDEX (primary, USB, address 00:1A:7D:DA:71:1<i>,
//                    name hci<i>) and INDEX_INFO (manufacturer 10) for each
//   STANDIN_LATE_ADAPTER  an index announced after the capture's records, then removed
//   STANDIN_START_DELAY_MS  wait this long before the first message
//   STANDIN_LIMIT    stop after this many messages (sent or dropped), whatever the repeats
//   STANDIN_SENDLOG  file to write each sent message's CLOCK_MONOTONIC send time to, one per
//                    line (the benchmark's latency figures)
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
// Messages dropped (STANDIN_DROP), reported through getsockopt(SO_MEMINFO) as the kernel does.
static volatile unsigned long dropped_total = 0;

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Paced by the schedule, not by a sleep per message (sleeps are coarser than 20 µs).
static void pace(double rate, double start, unsigned long sent) {
  if (rate <= 0) return;
  double due = start + (double)sent / rate;
  double wait = due - now_seconds();
  if (wait > 0.0005) {
    struct timespec ts;
    ts.tv_sec = (time_t)wait;
    ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
  }
}

static void send_index(int out, uint16_t opcode, uint16_t index) {
  unsigned char message[6 + 16];
  size_t size = 0;
  unsigned char *data = message + 6;
  if (opcode == 0) {  // NEW_INDEX: type, bus, address, name[8]
    data[0] = 0; data[1] = 1;
    unsigned char address[6] = {0x10 + (index & 0x0F), 0x71, 0xDA, 0x7D, 0x1A, 0x00};
    memcpy(data + 2, address, 6);
    memset(data + 8, 0, 8);
    snprintf((char *)data + 8, 8, "hci%u", (unsigned)index);
    size = 16;
  } else if (opcode == 10) {  // INDEX_INFO: address, manufacturer
    unsigned char address[6] = {0x10 + (index & 0x0F), 0x71, 0xDA, 0x7D, 0x1A, 0x00};
    memcpy(data, address, 6);
    data[6] = 10; data[7] = 0;
    size = 8;
  }
  message[0] = opcode & 0xFF; message[1] = opcode >> 8;
  message[2] = index & 0xFF; message[3] = index >> 8;
  message[4] = size & 0xFF; message[5] = (size >> 8) & 0xFF;
  send(out, message, 6 + size, 0);
}

static void *feed(void *arg) {
  int out = (int)(intptr_t)arg;
  const char *path = getenv("STANDIN_CAPTURE");
  double rate = getenv("STANDIN_RATE") ? atof(getenv("STANDIN_RATE")) : 0;
  int repeat = getenv("STANDIN_REPEAT") ? atoi(getenv("STANDIN_REPEAT")) : 1;
  int drop = getenv("STANDIN_DROP") && atoi(getenv("STANDIN_DROP")) == 1;
  unsigned long limit = getenv("STANDIN_LIMIT") ? strtoul(getenv("STANDIN_LIMIT"), NULL, 10) : 0;
  FILE *sendlog = getenv("STANDIN_SENDLOG") ? fopen(getenv("STANDIN_SENDLOG"), "w") : NULL;
  unsigned long sent = 0, dropped = 0;
  if (getenv("STANDIN_START_DELAY_MS")) usleep((useconds_t)atoi(getenv("STANDIN_START_DELAY_MS")) * 1000);
  if (getenv("STANDIN_ADAPTERS")) {
    char list[256];
    snprintf(list, sizeof list, "%s", getenv("STANDIN_ADAPTERS"));
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
      send_index(out, 0, (uint16_t)atoi(item));
      send_index(out, 10, (uint16_t)atoi(item));
    }
  }
  double start = now_seconds();
  unsigned char header[24];
  static unsigned char message[6 + 65536];
  for (int round = 0; round < repeat; round++) {
    FILE *file = path ? fopen(path, "rb") : NULL;
    if (!file || fread(header, 1, 16, file) != 16) {
      if (file) fclose(file);
      break;
    }
    uint32_t datalink = be32(header + 12);
    int stop = 0;
    while (!stop && fread(header, 1, 24, file) == 24) {
      if (limit && sent + dropped >= limit) {
        stop = 1;
        break;
      }
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
      if (send(out, message, 6 + size, drop ? MSG_DONTWAIT : 0) < 0) {
        if (drop && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          dropped++;
          __atomic_store_n(&dropped_total, dropped, __ATOMIC_RELAXED);
        }
        else stop = 1;
      } else {
        sent++;
        if (sendlog) fprintf(sendlog, "%.6f\n", now_seconds());
      }
      pace(rate, start, sent + dropped);
    }
    fclose(file);
    if (stop) break;
  }
  double seconds = now_seconds() - start;
  if (sendlog) fclose(sendlog);
  if (getenv("STANDIN_LATE_ADAPTER")) {
    uint16_t late = (uint16_t)atoi(getenv("STANDIN_LATE_ADAPTER"));
    usleep(300000);  // after the reader's opening-burst wait
    send_index(out, 0, late);
    send_index(out, 10, late);
    send_index(out, 1, late);
  }
  if (getenv("STANDIN_REPORT")) {
    FILE *report = fopen(getenv("STANDIN_REPORT"), "w");
    if (report) {
      struct timespec cpu;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
      fprintf(report, "sent %lu dropped %lu seconds %.3f cpu %.6f\n", sent, dropped, seconds,
              (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
      fclose(report);
    }
  }
  if (getenv("STANDIN_HOLD_MS")) usleep((useconds_t)atoi(getenv("STANDIN_HOLD_MS")) * 1000);
  close(out);
  return NULL;
}

// SO_MEMINFO on the stand-in's socket: the drop counter (SK_MEMINFO_DROPS, index 8) counts
// what the feeder dropped; the rest is the real socket's.
int getsockopt(int fd, int level, int name, void *value, socklen_t *length) {
  static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
  if (!real_getsockopt) real_getsockopt = (int (*)(int, int, int, void *, socklen_t *))dlsym(RTLD_NEXT, "getsockopt");
  int result = real_getsockopt(fd, level, name, value, length);
  if (result == 0 && fd == fake_fd && level == SOL_SOCKET && name == 55 && *length >= 9 * sizeof(uint32_t)) {
    ((uint32_t *)value)[8] = (uint32_t)__atomic_load_n(&dropped_total, __ATOMIC_RELAXED);
  }
  return result;
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
