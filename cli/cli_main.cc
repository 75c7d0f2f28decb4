#include "cli/cli_main.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/kafka_errors.h"

namespace runnel::cli {

namespace {

struct CommandEntry {
  const char* name;
  int (*run)(const std::vector<std::string>&);
};

constexpr CommandEntry kCommands[] = {{"topic", topic_command},
                                      {"produce", produce_command},
                                      {"consume", consume_command},
                                      {"group", group_command},
                                      {"cluster", cluster_command},
                                      {"acl", acl_command},
                                      {"user", user_command}};

}  // namespace

const char* cli_usage() {
  return "       runnel topic create|list|describe|alter-config|add-partitions|delete ...\n"
         "       runnel produce TOPIC [options]    records from stdin or a file\n"
         "       runnel consume TOPIC [options]    records to stdout\n"
         "       runnel group list|describe|reset-offsets|delete ...\n"
         "       runnel cluster info|health\n"
         "       runnel acl create|list|delete ...     ACL bindings\n"
         "       runnel user create|list|delete ...    SCRAM users\n"
         "       (each takes --help; -b HOST:PORT or $RUNNEL_BROKERS names the bootstrap servers;\n"
         "        -X security.protocol=SASL_SSL -X sasl.mechanism=... reach secured listeners, as kcat's -X)\n"
         "exit codes: 0 ok, 1 Kafka error, 2 usage, 3 cannot connect, 4 cluster unhealthy\n";
}

bool is_cli_command(const char* name) {
  for (const auto& c : kCommands)
    if (std::strcmp(c.name, name) == 0) return true;
  return false;
}

int cli_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (std::strcmp(c.name, argv[1]) != 0) continue;
    try {
      return c.run(args);
    } catch (const HelpShown&) {
      return kExitOk;
    } catch (const UsageError& e) {
      std::fprintf(stderr, "runnel %s: %s\n", c.name, e.what());
      return kExitUsage;
    } catch (const KafkaError& e) {
      std::fprintf(stderr, "runnel %s: %s\n", c.name, e.what());
      if (*error_hint(e.code())) std::fprintf(stderr, "  hint: %s\n", error_hint(e.code()));
      return kExitKafkaError;
    } catch (const ConnectError& e) {
      std::fprintf(stderr, "runnel %s: %s\n  hint: check -b / $RUNNEL_BROKERS and that the broker runs\n", c.name,
                   e.what());
      return kExitCannotConnect;
    } catch (const std::exception& e) {
      // Reading the input, a malformed response: not a Kafka error code.
      std::fprintf(stderr, "runnel %s: %s\n", c.name, e.what());
      return kExitKafkaError;
    }
  }
  return kExitUsage;
}

}  // namespace runnel::cli
