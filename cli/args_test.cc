#include "cli/args.h"

#include <catch2/catch.hpp>

#include "cli/client_config.h"
#include "cli/kafka_errors.h"

using namespace runnel::cli;

namespace {
const OptionSpec kSpecs[] = {{'p', "partitions", "N", ""},
                             {'c', "topic-config", "K=V", ""},
                             {'e', "exit", nullptr, ""},
                             {'o', "offset", "OFFSET", ""},
                             kBrokersOption,
                             kConfigOption};
ParsedArgs parse(std::vector<std::string> a) { return parse_args(kSpecs, a); }
}  // namespace

TEST_CASE("short, glued, long and long= forms all give the value") {
  CHECK(parse({"-p", "3"}).get("partitions") == "3");
  CHECK(parse({"-p3"}).get("partitions") == "3");
  CHECK(parse({"--partitions", "3"}).get("partitions") == "3");
  CHECK(parse({"--partitions=3"}).get("partitions") == "3");
  CHECK(parse({"-p", "3"}).get_int("partitions") == 3);
}

TEST_CASE("repeated options keep every value in order, positionals stay apart") {
  auto a = parse({"orders", "-c", "a=1", "--topic-config", "b=2", "-e", "extra"});
  CHECK(a.all("topic-config") == std::vector<std::string>{"a=1", "b=2"});
  CHECK(a.has("exit"));
  CHECK(a.positionals() == std::vector<std::string>{"orders", "extra"});
}

TEST_CASE("a negative number is a value or a positional, not an option") {
  CHECK(parse({"-o", "-5"}).get("offset") == "-5");
  CHECK(parse({"-5"}).positionals() == std::vector<std::string>{"-5"});
  CHECK(parse({"--", "-e"}).positionals() == std::vector<std::string>{"-e"});
}

TEST_CASE("mistakes are usage errors") {
  CHECK_THROWS_AS(parse({"--nope"}), UsageError);
  CHECK_THROWS_AS(parse({"-q"}), UsageError);
  CHECK_THROWS_AS(parse({"-p"}), UsageError);
  CHECK_THROWS_AS(parse({"--exit=1"}), UsageError);
  CHECK_THROWS_AS(parse({"-p", "x"}).get_int("partitions"), UsageError);
  CHECK_THROWS_AS(parse({"-p", "3x"}).get_int("partitions"), UsageError);
  CHECK_THROWS_AS(split_key_value("novalue", "-c"), UsageError);
  CHECK(split_key_value("a=b=c", "-c") == std::pair<std::string, std::string>{"a", "b=c"});
}

TEST_CASE("bootstrap lists and -X configs") {
  auto brokers = parse_broker_list("127.0.0.1:9092,[::1]:9093,,kafka:19092");
  REQUIRE(brokers.size() == 3);
  CHECK(brokers[0].host == "127.0.0.1");
  CHECK(brokers[0].port == 9092);
  CHECK(brokers[1].host == "::1");
  CHECK(brokers[2].port == 19092);
  CHECK_THROWS_AS(parse_broker_list("nohost"), UsageError);
  CHECK_THROWS_AS(parse_broker_list("h:0"), UsageError);
  CHECK_THROWS_AS(parse_broker_list(""), UsageError);

  auto c = ClientConfig::from(parse({"-b", "h:1", "-X", "client.id=me", "-X", "request.timeout.ms=1500"}));
  CHECK(c.bootstrap().front().host == "h");
  CHECK(c.client_id() == "me");
  CHECK(c.request_timeout().count() == 1500);
  CHECK_THROWS_AS(ClientConfig::from(parse({"-X", "no.such.config=1"})), UsageError);
}
