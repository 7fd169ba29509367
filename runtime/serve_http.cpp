//===- serve_http.cpp - `MODEL serve`: the routes over HTTP/1.1 -----------===//
//
// Boost.Beast (header-only, so the executable still stands alone) parses
// and writes HTTP; this file only connects it to serve_routes.h: a thread
// per connection (keep-alive, an idle timeout), bodies capped at
// --max-body, server-sent events as chunks, and a signal thread that drains
// on SIGTERM or SIGINT: new work is refused with 503, requests in flight
// finish and are answered, then the process exits 0.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve.h"

#include "runtime/serve_routes.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <cstdlib>
#include <memory>
#include <set>
#include <system_error>
#include <thread>

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

namespace tmr::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

/// Open connections and their threads, so that a drain can wait for
/// requests in flight, close the idle connections and wait for every thread
/// to be done with its socket: a socket outliving the server's io_context
/// would use it after it is gone.
class Connections {
public:
  /// A new connection, and the thread that will serve it (finished()).
  bool add(int fd, int64_t limit) {
    std::lock_guard<std::mutex> lock(mutex);
    if (static_cast<int64_t>(open.size()) >= limit)
      return false;
    open.insert(fd);
    ++threads;
    return true;
  }
  void remove(int fd) {
    std::lock_guard<std::mutex> lock(mutex);
    open.erase(fd);
  }
  /// A connection's thread has closed its socket and touches nothing of the
  /// server after this. Notified under the lock, so that drain() cannot
  /// return (and the server destroy this object) before it is done.
  void finished() {
    std::lock_guard<std::mutex> lock(mutex);
    --threads;
    changed.notify_all();
  }
  void beginRequest() { ++busy; }
  void endRequest() {
    {
      std::lock_guard<std::mutex> lock(mutex); // no wakeup lost between drain's test and wait
      --busy;
    }
    changed.notify_all();
  }
  /// Waits until no request is in flight (up to `timeout`), then shuts
  /// every connection down and waits for their threads to end. False if one
  /// is still running after `threadTimeout`: the server cannot be torn down.
  bool drain(std::chrono::seconds timeout, std::chrono::seconds threadTimeout) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, timeout, [&] { return busy.load() == 0; });
    for (int fd : open)
      ::shutdown(fd, SHUT_RDWR);
    return changed.wait_for(lock, threadTimeout, [&] { return threads == 0; });
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  std::set<int> open;
  int64_t threads = 0;
  std::atomic<int64_t> busy{0};
};

/// Whether the peer has closed its side of `fd` (it left before its reply).
bool peerClosed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void serveConnection(tcp::socket &socket, Routes &routes, Metrics &metrics,
                     Connections &connections, const ServeOptions &options) {
  const int fd = socket.native_handle();
  // An idle keep-alive connection is closed after this long.
  timeval idle{static_cast<time_t>(options.idleSeconds), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
  beast::flat_buffer buffer;
  beast::error_code ec;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(static_cast<uint64_t>(options.maxBody));
    parser.header_limit(64 * 1024);
    http::read(socket, buffer, parser, ec);
    if (ec == http::error::end_of_stream || ec == net::error::connection_reset ||
        ec == net::error::eof || ec == net::error::would_block || ec == net::error::try_again)
      break;
    const auto start = std::chrono::steady_clock::now();
    Reply reply;
    bool keepAlive = false;
    std::string path;
    int version = 11;
    if (ec) {
      // Unreadable or oversized: answered, then the connection closes (the
      // rest of what the client sent cannot be framed).
      reply = ec == http::error::body_limit
                  ? errorReply(413, "the body exceeds --max-body (" +
                                        std::to_string(options.maxBody) + " bytes)")
                  : errorReply(400, "malformed HTTP request: " + ec.message());
    } else {
      http::request<http::string_body> request = parser.release();
      keepAlive = request.keep_alive();
      version = static_cast<int>(request.version());
      std::string target(request.target());
      path = target.substr(0, target.find('?'));
      // In flight from here until its reply is written: a drain waits.
      connections.beginRequest();
      reply = routes.handle(std::string(request.method_string()), path, request.body(),
                            [fd] { return peerClosed(fd); });
    }
    // Ends the request begun above, whichever way this iteration leaves.
    struct InFlight {
      Connections &connections;
      bool begun;
      ~InFlight() {
        if (begun)
          connections.endRequest();
      }
    } inFlight{connections, !ec};
    const auto route = Routes::routeOf(path);
    if (reply.status == 499) { // the client left: nothing to answer
      metrics.record(route, reply.status, 0);
      break;
    }
    if (reply.stream) {
      http::response<http::empty_body> head{http::status::ok, version};
      head.set(http::field::content_type, reply.contentType);
      head.set(http::field::cache_control, "no-cache");
      head.chunked(true);
      head.keep_alive(keepAlive);
      http::response_serializer<http::empty_body> serializer{head};
      http::write_header(socket, serializer, ec);
      std::string event;
      while (!ec && reply.stream(&event))
        net::write(socket, http::make_chunk(net::buffer(event)), ec);
      if (!ec)
        net::write(socket, http::make_chunk_last(), ec);
      if (ec && reply.cancel)
        reply.cancel(); // a client that disconnects frees its slot
      metrics.record(
          route, ec ? 499 : 200,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (ec || !keepAlive)
        break;
      continue;
    }
    http::response<http::string_body> response{static_cast<http::status>(reply.status), version};
    response.set(http::field::content_type, reply.contentType);
    response.keep_alive(keepAlive);
    response.body() = std::move(reply.body);
    response.prepare_payload();
    http::write(socket, response, ec);
    if (!ec && reply.status == 413) {
      // The client may still be sending the body: read it away (for a
      // while) so that it sees the reply instead of a reset connection.
      ::shutdown(fd, SHUT_WR);
      timeval brief{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &brief, sizeof brief);
      char sink[65536];
      for (int64_t discarded = 0; discarded < (int64_t(64) << 20);) {
        ssize_t got = ::recv(fd, sink, sizeof sink, 0);
        if (got <= 0)
          break;
        discarded += got;
      }
    }
    metrics.record(route, reply.status,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (ec || !keepAlive)
      break;
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  connections.remove(fd); // before the socket closes and its fd can be reused
}

} // namespace

namespace {
sigset_t shutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}
} // namespace

void blockShutdownSignals() {
  sigset_t signals = shutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int runServer(Engine &engine, const tmr_model_desc &desc, const Tokenizer *tokenizer,
              const ServeOptions &options) {
  // SIGTERM and SIGINT go to the signal thread alone (blockShutdownSignals).
  blockShutdownSignals();
  sigset_t signals = shutdownSignals();
  std::signal(SIGPIPE, SIG_IGN); // a client gone mid-write is an error code, not a death

  Metrics metrics;
  Limits limits;
  limits.maxBody = options.maxBody;
  limits.defaultMaxTokens = options.defaultMaxTokens;
  Routes routes(desc, engine, tokenizer, limits, metrics);
  Connections connections;

  net::io_context context;
  beast::error_code ec;
  auto address = net::ip::make_address(options.host, ec);
  if (ec) {
    std::fprintf(stderr, "error: --host: '%s' is not an IP address (%s)\n", options.host.c_str(),
                 ec.message().c_str());
    return 2;
  }
  tcp::acceptor acceptor(context);
  tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    acceptor.bind(endpoint, ec);
  if (!ec)
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    std::fprintf(stderr, "error: cannot listen on %s:%d: %s\n", options.host.c_str(), options.port,
                 ec.message().c_str());
    return 1;
  }
  std::printf("serving model '%s' on http://%s:%d (%d slots; SIGTERM drains and exits)\n",
              desc.name, options.host.c_str(), acceptor.local_endpoint().port(), options.slots);
  std::fflush(stdout);

  std::atomic<bool> stopping{false};
  std::thread signalThread([&] {
    int received = 0;
    sigwait(&signals, &received);
    stopping = true;
    routes.startDraining();
    // Stop accepting; requests in flight finish and are answered.
    ::shutdown(acceptor.native_handle(), SHUT_RDWR);
  });
  while (!stopping) {
    tcp::socket socket(context);
    acceptor.accept(socket, ec);
    if (ec) {
      if (stopping)
        break;
      // Out of descriptors or memory for a moment: not a reason to spin.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const int fd = socket.native_handle();
    if (!connections.add(fd, options.maxConnections)) {
      // Over the limit: a 503 on the spot, from this thread.
      http::response<http::string_body> busy{http::status::service_unavailable, 11};
      busy.set(http::field::content_type, "application/json");
      busy.body() = errorReply(503, "too many open connections (--max-connections)").body;
      busy.keep_alive(false);
      busy.prepare_payload();
      http::write(socket, busy, ec);
      continue;
    }
    // The thread owns the socket and closes it before finished(): nothing
    // of the io_context is touched after the drain has seen it end.
    auto owned = std::make_unique<tcp::socket>(std::move(socket));
    try {
      std::thread([owned = std::move(owned), &routes, &metrics, &connections, &options]() mutable {
        {
          std::unique_ptr<tcp::socket> connection = std::move(owned);
          serveConnection(*connection, routes, metrics, connections, options);
        }
        connections.finished();
      }).detach();
    } catch (const std::system_error &) {
      // No thread to serve it (out of threads): the connection closes.
      connections.remove(fd);
      connections.finished();
    }
  }
  if (!connections.drain(std::chrono::seconds(options.drainSeconds), std::chrono::seconds(60))) {
    // A connection's thread did not end: tearing the server down under it
    // would be undefined, so the process ends here instead.
    std::fprintf(stderr, "error: a connection did not close within 60 s of the drain\n");
    std::fflush(stderr);
    std::_Exit(1);
  }
  engine.drain();
  signalThread.join();
  std::printf("drained: every request in flight was answered; exiting\n");
  std::fflush(stdout);
  return 0;
}

} // namespace tmr::serve
