// The broker's event loop: an io_context that can destroy the handlers
// still queued on it while the objects they refer to are alive. At exit a
// request's handler can still be pending (its connection closed by the
// drain while it waited on the blocking pool); a plain io_context destroys
// such a coroutine in its own destructor, after the broker it points into
// (a use after free request_fuzz found). So the owner stops the loop, joins
// the blocking pool (Broker::join_blocking_work), calls drop_pending(), and
// only then destroys the broker.
#pragma once

#include "broker/asio.h"

namespace runnel::broker {

class EventLoop : public asio::io_context {
 public:
  using asio::io_context::io_context;
  // Shuts the loop's services down: every handler not yet run is destroyed
  // now. The loop cannot run again; the I/O objects on it may still be
  // destroyed afterwards.
  void drop_pending() { shutdown(); }
};

}  // namespace runnel::broker
