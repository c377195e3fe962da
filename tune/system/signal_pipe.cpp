#include "tune/system/signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "core/errors.h"

namespace tune {
namespace {

int g_pipe[2] = {-1, -1};
struct sigaction g_old_int, g_old_term;

void on_signal(int) {
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw Error("cannot create the signal pipe");
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

SignalPipe::~SignalPipe() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  close(g_pipe[0]);
  close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int SignalPipe::fd() const { return g_pipe[0]; }

int SignalPipe::take() {
  char buffer[64];
  int n = 0;
  ssize_t r;
  while ((r = read(g_pipe[0], buffer, sizeof buffer)) > 0) n += static_cast<int>(r);
  return n;
}

}  // namespace tune
