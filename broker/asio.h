// The Asio names the broker uses, in one place.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>

namespace runnel::broker {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using boost::system::error_code;
inline constexpr auto use_awaitable = asio::use_awaitable;
inline constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

}  // namespace runnel::broker
