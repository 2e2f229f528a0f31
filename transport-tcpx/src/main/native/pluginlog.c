/*
 * tcpx4j plugin logger, written for tcpx4j.
 *
 * A net plugin's init takes an ncclDebugLogger_t, a printf-style variadic function:
 *   void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);
 * A Java callback cannot read C varargs, so the plugin is given tcpx4j_pluginlog instead: it
 * formats the message with vsnprintf and hands the finished line to the sink Java registered with
 * tcpx4j_pluginlog_set_sink (one sink per process). Lines longer than the buffer end in "...".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define LINE_BYTES 2048

typedef void (*tcpx4j_log_sink)(int level, unsigned long flags, const char *file, int line, const char *message);

static tcpx4j_log_sink sink;

EXPORT void tcpx4j_pluginlog_set_sink(tcpx4j_log_sink s) {
  __atomic_store_n(&sink, s, __ATOMIC_RELEASE);
}

EXPORT void tcpx4j_pluginlog(int level, unsigned long flags, const char *file, int line, const char *fmt, ...) {
  tcpx4j_log_sink s = __atomic_load_n(&sink, __ATOMIC_ACQUIRE);
  if (s == NULL) return;
  char buf[LINE_BYTES];
  buf[0] = '\0';
  if (fmt != NULL) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
      snprintf(buf, sizeof buf, "%s (could not be formatted)", fmt);
    } else if ((size_t)n >= sizeof buf) {
      memcpy(buf + sizeof buf - 4, "...", 4);
    }
  }
  s(level, flags, file, line, buf);
}
